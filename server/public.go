package server

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/runner/gitops"
)

// DataDirShown stands for the server's data dir in text shown on GitHub.
const DataDirShown = "<data dir>"

// public makes text fit to leave the server (check titles, summaries,
// comments): the data dir, under which every mirror, run directory and
// worktree lives, is replaced wherever it occurs, also inside a message
// of git's own. The full text stays in the server's log.
func (s *Server) public(text string) string {
	dirs := []string{s.o.DataDir}
	if real, err := filepath.EvalSymlinks(s.o.DataDir); err == nil && real != s.o.DataDir {
		dirs = append(dirs, real)
	}
	for _, d := range dirs {
		if d != "" && d != "/" {
			text = strings.ReplaceAll(text, d, DataDirShown)
		}
	}
	return text
}

// publicReason is what a failed run's checks say: git failures without the
// command line and directories (the full error is in the log), and no
// server path in any message.
func (s *Server) publicReason(err error) string {
	if gerr, ok := errors.AsType[*gitops.Error](err); ok {
		return s.public(gerr.Public())
	}
	return s.public(err.Error())
}
