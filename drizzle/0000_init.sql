CREATE TABLE `accounts` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `accounts_name_unique` ON `accounts` (`name`);--> statement-breakpoint
CREATE TABLE `api_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`prefix` text NOT NULL,
	`hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`revoked_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_keys_prefix` ON `api_keys` (`prefix`);--> statement-breakpoint
CREATE INDEX `api_keys_account` ON `api_keys` (`account_id`);--> statement-breakpoint
CREATE TABLE `feedback` (
	`id` text PRIMARY KEY NOT NULL,
	`request_id` text NOT NULL,
	`account_id` text NOT NULL,
	`rating` text,
	`reason` text,
	`comment` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`request_id`) REFERENCES `requests`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `feedback_request` ON `feedback` (`request_id`);--> statement-breakpoint
CREATE TABLE `grant_charges` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`grant_id` text NOT NULL,
	`usage_event_id` text NOT NULL,
	`request_id` text NOT NULL,
	`cost_type` text NOT NULL,
	`amount_nanos` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`usage_event_id`) REFERENCES `usage_events`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `grant_charges_request` ON `grant_charges` (`request_id`);--> statement-breakpoint
CREATE INDEX `grant_charges_grant` ON `grant_charges` (`grant_id`);--> statement-breakpoint
CREATE TABLE `grants` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`amount_nanos` integer NOT NULL,
	`remaining_nanos` integer NOT NULL,
	`scope_cost_type` text NOT NULL,
	`source` text NOT NULL,
	`scope_routing_modes` text,
	`scope_models` text,
	`scope_providers` text,
	`expires_at` integer,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `grants_account` ON `grants` (`account_id`);--> statement-breakpoint
CREATE TABLE `provider_keys` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`sealed` text NOT NULL,
	`hint` text NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `provider_keys_account_provider` ON `provider_keys` (`account_id`,`provider_id`);--> statement-breakpoint
CREATE TABLE `requests` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`api_key_id` text,
	`surface` text NOT NULL,
	`routing_mode` text NOT NULL,
	`status` text NOT NULL,
	`http_status` integer,
	`error_type` text,
	`error_message` text,
	`stream` integer NOT NULL,
	`selected_model_id` text,
	`selected_provider_id` text,
	`provider_ranks` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`total_cost_nanos` integer DEFAULT 0 NOT NULL,
	`charged_nanos` integer DEFAULT 0 NOT NULL,
	`total_input_tokens` integer DEFAULT 0 NOT NULL,
	`total_cached_input_tokens` integer DEFAULT 0 NOT NULL,
	`total_cache_creation_input_tokens` integer DEFAULT 0 NOT NULL,
	`total_output_tokens` integer DEFAULT 0 NOT NULL,
	`session_id` text,
	`agent_id` text,
	`session_source` text,
	`byok` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`first_byte_at` integer,
	`ended_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `accounts`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `requests_account_created` ON `requests` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `requests_account_session` ON `requests` (`account_id`,`session_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `usage_events` (
	`id` text PRIMARY KEY NOT NULL,
	`request_id` text NOT NULL,
	`account_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`model_id` text NOT NULL,
	`provider_id` text NOT NULL,
	`upstream_model` text NOT NULL,
	`committed` integer NOT NULL,
	`estimated` integer NOT NULL,
	`outcome` text NOT NULL,
	`error` text,
	`input_tokens` integer DEFAULT 0 NOT NULL,
	`cached_input_tokens` integer DEFAULT 0 NOT NULL,
	`cache_creation_input_tokens` integer DEFAULT 0 NOT NULL,
	`output_tokens` integer DEFAULT 0 NOT NULL,
	`cost_nanos` integer DEFAULT 0 NOT NULL,
	`charged_nanos` integer DEFAULT 0 NOT NULL,
	`byok` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`ended_at` integer,
	FOREIGN KEY (`request_id`) REFERENCES `requests`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `usage_events_request` ON `usage_events` (`request_id`);--> statement-breakpoint
CREATE INDEX `usage_events_account_created` ON `usage_events` (`account_id`,`created_at`);