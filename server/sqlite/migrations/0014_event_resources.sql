-- The resource an event tells of (its token, charge, refund, cancel or
-- subscription), so that a resource's own events can be listed (the
-- console's charge page) without reading every event's data. Events from
-- before this column take the id their data begins with, as the API
-- writes every resource ({"id":"…", …}); any other keeps none ('').
ALTER TABLE events ADD COLUMN resource_id TEXT NOT NULL DEFAULT '';
UPDATE events SET resource_id = substr(data, 8, 36)
	WHERE data GLOB '{"id":"[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]"*';
CREATE INDEX events_by_resource ON events (resource_id, id);
