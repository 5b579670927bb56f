package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockFileName is the file in the data directory whose lock says that a
// process uses the store as its gateway (or copies it elsewhere).
const LockFileName = "kessai.lock"

// ErrLocked is LockDir's answer when another process holds the lock.
var ErrLocked = errors.New("sqlite: another process holds the data directory's lock")

// DirLock is a held lock on a data directory; Close releases it.
type DirLock struct{ f *os.File }

// LockDir takes the data directory's lock without waiting: kessai serve
// holds it while it runs on the embedded store, and kessai migrate while
// it copies the store, which must not miss a charge written after its
// snapshot. SQLite itself lets several processes share the file, so the
// lock is this one, an flock(2) on LockFileName: the kernel releases it
// when its process ends, however it ends, so a crashed gateway leaves no
// stale lock.
func LockDir(dir string) (*DirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, LockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrLocked
		}
		return nil, fmt.Errorf("sqlite: lock: %w", err)
	}
	return &DirLock{f: f}, nil
}

// Close releases the lock.
func (l *DirLock) Close() error { return l.f.Close() }
