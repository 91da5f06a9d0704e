// Text imports (`with { type: 'text' }`) let the compiled binary carry migrations and assets.
declare module '*.sql' {
  const text: string
  export default text
}
