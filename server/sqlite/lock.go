package sqlite

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// LockFileName is the file in the data directory whose lock says that a
// process uses the store as its gateway (or copies it elsewhere).
const LockFileName = "kessai.lock"

// ErrLocked is LockDir's answer when another process holds the lock.
var ErrLocked = errors.New("sqlite: another process holds the data directory's lock")

// DirLock is a held lock on a data directory; Close releases it.
type DirLock struct{ f io.Closer }

// LockDir takes the data directory's lock without waiting: kessai serve
// holds it while it runs on the embedded store, and kessai migrate while
// it copies the store, which must not miss a charge written after its
// snapshot. SQLite itself lets several processes share the file, so the
// lock is this one, on LockFileName (flock(2) on Unix, a handle opened
// without sharing on Windows): the system releases it when its process
// ends, however it ends, so a crashed gateway leaves no stale lock.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := lockFile(filepath.Join(dir, LockFileName))
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, fmt.Errorf("sqlite: lock: %w", err)
	}
	return &DirLock{f: f}, nil
}

// Close releases the lock.
func (l *DirLock) Close() error {
	if l.f == nil {
		return nil
	}
	return l.f.Close()
}
