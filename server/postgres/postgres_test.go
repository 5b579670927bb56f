package postgres_test

import (
	"testing"

	"github.com/kessai/kessai/server/payment"
	"github.com/kessai/kessai/server/postgres/postgrestest"
	"github.com/kessai/kessai/server/storagetest"
)

func TestConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) payment.Storage { return postgrestest.Open(t) })
}

func TestIdempotencyStore(t *testing.T) {
	storagetest.RunIdempotency(t, func(t *testing.T) payment.IdempotencyStore { return postgrestest.Open(t) })
}
