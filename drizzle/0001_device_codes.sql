CREATE TABLE `device_codes` (
	`device_code_hash` text PRIMARY KEY NOT NULL,
	`user_code` text NOT NULL,
	`device_name` text NOT NULL,
	`status` text NOT NULL,
	`account_id` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`last_poll_at` integer,
	`interval_seconds` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `device_codes_user_code` ON `device_codes` (`user_code`);