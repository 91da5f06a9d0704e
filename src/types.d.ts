// Text imports (`with { type: 'text' }`) let the compiled binary carry migrations and assets.
declare module '*.sql' {
  const text: string
  export default text
}
declare module '*.css' {
  const text: string
  export default text
}
// The dashboard's scripts and uPlot's bundle are served, never run by the server: text, not modules.
declare module '../dashboard/*.js' {
  const text: string
  export default text
}
declare module 'uplot/dist/uPlot.iife.min.js' {
  const text: string
  export default text
}
