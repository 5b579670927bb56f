package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/kessai/kessai/server/payment"
)

// ChangeFeed returns the feed that links the gateway processes on this
// database (payment.ChangeFeed): NOTIFY on a channel of the schema's own,
// LISTEN on a connection of the feed's own, outside the pool, so that a
// listener never holds a pooled connection and a pooled connection never
// carries a LISTEN back into the pool.
//
// The channel is named after the database and schema: NOTIFY channels are
// database-wide, and two Kessai schemas in one database (tests, or staging
// beside production) must not hear each other.
func (db *DB) ChangeFeed(ctx context.Context) (payment.ChangeFeed, error) {
	var database, schema string
	if err := db.pool.QueryRow(ctx, `SELECT current_database(), current_schema()`).Scan(&database, &schema); err != nil {
		return nil, fmt.Errorf("postgres: change feed: %w", err)
	}
	sum := sha256.Sum256([]byte(database + "\x00" + schema))
	origin := make([]byte, 8)
	if _, err := rand.Read(origin); err != nil {
		return nil, err
	}
	return &changeFeed{
		db:      db,
		channel: "kessai_news_" + hex.EncodeToString(sum[:8]),
		origin:  hex.EncodeToString(origin),
	}, nil
}

type changeFeed struct {
	db      *DB
	channel string
	// origin tags this process's notifications, so that it can skip its
	// own when they come back.
	origin string
}

// A notification's payload is text, at most 8000 bytes:
//
//	v1 <origin> <flags> <id>...
//
// with flags "w" (work queued), "e" (events recorded) or "-", and ids as
// 32 hex digits each prefixed "c" (changed) or "r" (revoked app token).
// News larger than one payload goes out as several.
const (
	payloadVersion = "v1"
	maxPayload     = 7900
)

func (f *changeFeed) Publish(ctx context.Context, n payment.News) error {
	payloads := encodeNews(f.origin, n)
	batch := &pgx.Batch{}
	for _, p := range payloads {
		batch.Queue(`SELECT pg_notify($1, $2)`, f.channel, p)
	}
	return f.db.pool.SendBatch(ctx, batch).Close()
}

func (f *changeFeed) Listen(ctx context.Context, deliver func(payment.News)) error {
	conn, err := pgx.ConnectConfig(ctx, f.db.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("postgres: change feed: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{f.channel}.Sanitize()); err != nil {
		return fmt.Errorf("postgres: change feed: %w", err)
	}
	for {
		note, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		origin, n, err := decodeNews(note.Payload)
		if err != nil || origin == f.origin {
			// Not ours to understand (another version, or anyone with
			// the right to NOTIFY), or our own news coming back.
			continue
		}
		deliver(n)
	}
}

func encodeNews(origin string, n payment.News) []string {
	flags := ""
	if n.Work {
		flags += "w"
	}
	if n.Events {
		flags += "e"
	}
	if flags == "" {
		flags = "-"
	}
	head := payloadVersion + " " + origin + " " + flags
	var payloads []string
	var b strings.Builder
	b.WriteString(head)
	add := func(prefix byte, id uuid.UUID) {
		if b.Len()+34 > maxPayload {
			payloads = append(payloads, b.String())
			b.Reset()
			b.WriteString(head)
		}
		var hexID [32]byte
		hex.Encode(hexID[:], id[:])
		b.WriteByte(' ')
		b.WriteByte(prefix)
		b.Write(hexID[:])
	}
	for _, id := range n.Changed {
		add('c', id)
	}
	for _, id := range n.Revoked {
		add('r', id)
	}
	return append(payloads, b.String())
}

var errBadPayload = errors.New("postgres: change feed: malformed notification")

func decodeNews(payload string) (origin string, n payment.News, err error) {
	fields := strings.Fields(payload)
	if len(fields) < 3 || fields[0] != payloadVersion || len(fields[1]) != 16 {
		return "", n, errBadPayload
	}
	origin = fields[1]
	switch fields[2] {
	case "-":
	case "w":
		n.Work = true
	case "e":
		n.Events = true
	case "we":
		n.Work, n.Events = true, true
	default:
		return "", payment.News{}, errBadPayload
	}
	for _, f := range fields[3:] {
		var id uuid.UUID
		if len(f) != 33 {
			return "", payment.News{}, errBadPayload
		}
		if _, err := hex.Decode(id[:], []byte(f[1:])); err != nil {
			return "", payment.News{}, errBadPayload
		}
		switch f[0] {
		case 'c':
			n.Changed = append(n.Changed, id)
		case 'r':
			n.Revoked = append(n.Revoked, id)
		default:
			return "", payment.News{}, errBadPayload
		}
	}
	return origin, n, nil
}
