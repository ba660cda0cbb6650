package wtpool

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// unlockRegistration removes the lock of the registration the worktree at
// wt points to, if that registration points back at wt: then git's next
// prune in that repository, once wt is deleted, removes it.
func unlockRegistration(wt string) {
	dotgit := filepath.Join(wt, ".git")
	admin, ok := strings.CutPrefix(readSmall(dotgit), "gitdir: ")
	if !ok || !filepath.IsAbs(admin) {
		return
	}
	if filepath.Clean(readSmall(filepath.Join(admin, "gitdir"))) != dotgit {
		return
	}
	_ = os.Remove(filepath.Join(admin, "locked"))
}

func readSmall(p string) string {
	b, err := safefile.ReadIn(filepath.Dir(p), filepath.Base(p), 4<<10)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
