//go:build !unix && !windows

package sqlite

import (
	"errors"
	"io"
)

func lockFile(string) (io.Closer, error) {
	return nil, errors.ErrUnsupported
}
