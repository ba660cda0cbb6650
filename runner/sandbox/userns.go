package sandbox

import (
	"bytes"
	"context"
	"os/exec"
	"sync"
	"time"
)

// usernsFlag caches bwrapDisablesUserns by bwrap path.
var usernsFlag sync.Map // string → bool

// bwrapDisablesUserns says whether the bwrap at path has --disable-userns
// (bubblewrap 0.8.0 and later), from its --help; an older one, or one
// whose --help fails, is used without it.
func bwrapDisablesUserns(path string) bool {
	if v, ok := usernsFlag.Load(path); ok {
		return v.(bool)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, path, "--help").CombinedOutput()
	has := bytes.Contains(out, []byte("--disable-userns"))
	usernsFlag.Store(path, has)
	return has
}
