package sqlstore

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestInstantScan: a time reads back the same, in UTC, whichever way the
// engine stored it; NULL is not valid.
func TestInstantScan(t *testing.T) {
	want := time.Date(2026, 3, 2, 10, 0, 0, 123456000, time.UTC)
	tokyo := time.FixedZone("JST", 9*3600)
	for _, src := range []any{want.UnixMicro(), want, want.In(tokyo)} {
		var i instant
		if err := i.Scan(src); err != nil || !i.valid || !i.t.Equal(want) || i.t.Location() != time.UTC {
			t.Errorf("Scan(%T %v) = %v (valid %t), %v; want %v in UTC", src, src, i.t, i.valid, err, want)
		}
	}
	i := instant{t: want, valid: true}
	if err := i.Scan(nil); err != nil || i.valid || i.ptr() != nil {
		t.Errorf("Scan(nil) = %+v, %v; want not valid", i, err)
	}
	if err := i.Scan("2026-03-02"); err == nil {
		t.Error("a time stored as text scanned without an error")
	}
}

// TestDayScan: a day reads as its YYYY-MM-DD text from either engine's
// form, for idColumns.date to check.
func TestDayScan(t *testing.T) {
	for _, src := range []any{"2026-03-02", []byte("2026-03-02"), time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)} {
		var d day
		if err := d.Scan(src); err != nil || !d.valid || d.s != "2026-03-02" {
			t.Errorf("Scan(%T %v) = %+v, %v", src, src, d, err)
		}
	}
	var d day
	if err := d.Scan(nil); err != nil || d.valid {
		t.Errorf("Scan(nil) = %+v, %v; want not valid", d, err)
	}
}

// TestCanonicalID: only uuid.UUID.String's form is canonical.
func TestCanonicalID(t *testing.T) {
	id := uuid.MustParse("0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")
	for s, want := range map[string]bool{
		id.String():                              true,
		"0195A1B2-C3D4-7E5F-8A9B-0C1D2E3F4A5B":   false,
		"{0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b}": false,
		"0195a1b2c3d47e5f8a9b0c1d2e3f4a5b":       false,
	} {
		if got := canonicalID(id, s); got != want {
			t.Errorf("canonicalID(%q) = %t, want %t", s, got, want)
		}
	}
}
