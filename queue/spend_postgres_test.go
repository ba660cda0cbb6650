//go:build unix

package queue

import "testing"

// Two replicas on one Postgres share the installation's daily spend.
func TestSpendPostgres(t *testing.T) {
	url := startPostgres(t)
	testSpend(t, postgresOpener(url), postgresOpener(url), true)
}
