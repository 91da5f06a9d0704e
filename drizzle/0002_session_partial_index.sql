DROP INDEX `grant_charges_grant`;--> statement-breakpoint
DROP INDEX `requests_account_session`;--> statement-breakpoint
CREATE INDEX `requests_account_session` ON `requests` (`account_id`,`session_id`,`created_at`) WHERE "requests"."session_id" is not null;