package gc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// mirrorInfoFile is the file the server writes into a mirror each time it
// fetches into it: its modification time is the mirror's last use, and it
// says which repository the mirror is of and where its remote is, for
// deleting run branches there. git ignores files it does not know in a
// repository's directory.
const mirrorInfoFile = "kilroy-mirror.json"

// MirrorInfo is what the sweep needs to reach a mirror's remote.
type MirrorInfo struct {
	Repo     string `json:"repo"`      // owner/name
	CloneURL string `json:"clone_url"` // no credentials: tokens are fetched when needed
}

// MarkMirror records that the mirror at dir was just used, and info.
func MarkMirror(dir string, info MirrorInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return fmt.Errorf("gc: mirror info: %w", err)
	}
	return safefile.WriteFile(filepath.Join(dir, mirrorInfoFile), append(b, '\n'))
}

// mirrorInfo reads what MarkMirror recorded and when; ok is false for a
// mirror without it (made before the file existed).
func mirrorInfo(dir string) (info MirrorInfo, used time.Time, ok bool) {
	b, err := safefile.ReadIn(dir, mirrorInfoFile, 64<<10)
	if err != nil || json.Unmarshal(b, &info) != nil {
		return MirrorInfo{}, time.Time{}, false
	}
	st, err := os.Stat(filepath.Join(dir, mirrorInfoFile))
	if err != nil {
		return MirrorInfo{}, time.Time{}, false
	}
	return info, st.ModTime(), true
}

// mirrorLastUse is when the mirror at dir was last fetched into: the
// mirror info's time, else (a mirror made before it existed) the newest
// change of its directory, refs and packs.
func mirrorLastUse(dir string) time.Time {
	if _, used, ok := mirrorInfo(dir); ok {
		return used
	}
	var newest time.Time
	for _, p := range []string{dir, filepath.Join(dir, "refs"), filepath.Join(dir, "packed-refs"), filepath.Join(dir, "objects", "pack")} {
		if st, err := os.Stat(p); err == nil {
			newest = later(newest, st.ModTime())
		}
	}
	return newest
}
