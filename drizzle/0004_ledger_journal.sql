CREATE TABLE `ledger_journal` (
	`seq` integer PRIMARY KEY NOT NULL,
	`entry` text NOT NULL
);
