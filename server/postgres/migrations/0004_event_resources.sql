-- The resource an event tells of (its token, charge, refund, cancel or
-- subscription), so that a resource's own events can be listed (the
-- console's charge page) without reading every event's data. Events from
-- before this column take the id their data begins with, as the API
-- writes every resource ({"id":"…", …}); any other keeps none (the nil
-- UUID).
ALTER TABLE events ADD COLUMN resource_id uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000000';
UPDATE events SET resource_id = substr(data, 8, 36)::uuid
	WHERE data ~ '^\{"id":"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"';
CREATE INDEX events_by_resource ON events (resource_id, id);
