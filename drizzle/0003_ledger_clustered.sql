-- Hand-finished from drizzle-kit's output: drizzle has no WITHOUT ROWID in its DSL, requests is
-- rebuilt too, and a charge's position within its leg is numbered from the old AUTOINCREMENT id.
-- Foreign keys are off while migrations run (src/db/open.ts) and checked after.
CREATE TABLE `__new_requests` (
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
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_requests` (`id`, `account_id`, `api_key_id`, `surface`, `routing_mode`, `status`, `http_status`, `error_type`, `error_message`, `stream`, `selected_model_id`, `selected_provider_id`, `provider_ranks`, `attempts`, `total_cost_nanos`, `charged_nanos`, `total_input_tokens`, `total_cached_input_tokens`, `total_cache_creation_input_tokens`, `total_output_tokens`, `session_id`, `agent_id`, `session_source`, `byok`, `created_at`, `first_byte_at`, `ended_at`) SELECT `id`, `account_id`, `api_key_id`, `surface`, `routing_mode`, `status`, `http_status`, `error_type`, `error_message`, `stream`, `selected_model_id`, `selected_provider_id`, `provider_ranks`, `attempts`, `total_cost_nanos`, `charged_nanos`, `total_input_tokens`, `total_cached_input_tokens`, `total_cache_creation_input_tokens`, `total_output_tokens`, `session_id`, `agent_id`, `session_source`, `byok`, `created_at`, `first_byte_at`, `ended_at` FROM `requests`;--> statement-breakpoint
DROP TABLE `requests`;--> statement-breakpoint
ALTER TABLE `__new_requests` RENAME TO `requests`;--> statement-breakpoint
CREATE INDEX `requests_account_created` ON `requests` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `requests_account_session` ON `requests` (`account_id`,`session_id`,`created_at`) WHERE "requests"."session_id" is not null;--> statement-breakpoint
CREATE TABLE `__new_usage_events` (
	`id` text NOT NULL,
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
	PRIMARY KEY(`request_id`, `attempt`),
	FOREIGN KEY (`request_id`) REFERENCES `requests`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_usage_events`("id", "request_id", "account_id", "attempt", "model_id", "provider_id", "upstream_model", "committed", "estimated", "outcome", "error", "input_tokens", "cached_input_tokens", "cache_creation_input_tokens", "output_tokens", "cost_nanos", "charged_nanos", "byok", "created_at", "ended_at") SELECT "id", "request_id", "account_id", "attempt", "model_id", "provider_id", "upstream_model", "committed", "estimated", "outcome", "error", "input_tokens", "cached_input_tokens", "cache_creation_input_tokens", "output_tokens", "cost_nanos", "charged_nanos", "byok", "created_at", "ended_at" FROM `usage_events`;--> statement-breakpoint
DROP TABLE `usage_events`;--> statement-breakpoint
ALTER TABLE `__new_usage_events` RENAME TO `usage_events`;--> statement-breakpoint
CREATE INDEX `usage_events_account_created` ON `usage_events` (`account_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `__new_grant_charges` (
	`request_id` text NOT NULL,
	`usage_event_id` text NOT NULL,
	`position` integer NOT NULL,
	`grant_id` text NOT NULL,
	`cost_type` text NOT NULL,
	`amount_nanos` integer NOT NULL,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`request_id`, `usage_event_id`, `position`),
	FOREIGN KEY (`request_id`) REFERENCES `requests`(`id`) ON UPDATE no action ON DELETE no action,
	FOREIGN KEY (`grant_id`) REFERENCES `grants`(`id`) ON UPDATE no action ON DELETE no action
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_grant_charges`("request_id", "usage_event_id", "position", "grant_id", "cost_type", "amount_nanos", "created_at") SELECT "request_id", "usage_event_id", row_number() OVER (PARTITION BY "request_id", "usage_event_id" ORDER BY "id") - 1, "grant_id", "cost_type", "amount_nanos", "created_at" FROM `grant_charges`;--> statement-breakpoint
DROP TABLE `grant_charges`;--> statement-breakpoint
ALTER TABLE `__new_grant_charges` RENAME TO `grant_charges`;