//go:build unix

package queue

import "testing"

func TestAnswersPostgres(t *testing.T) {
	testAnswers(t, postgresOpener(startPostgres(t)))
}
