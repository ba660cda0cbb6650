package gitops

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Identity is a git author or committer.
type Identity struct {
	Name  string
	Email string
}

// The bot's identity, used for every commit unless Options say otherwise.
const (
	BotName  = "kilroy-bot"
	BotEmail = "kilroy-bot@users.noreply.github.com"
)

// TokenSource returns a fresh credential for the remote. It is called right
// before each fetch, ls-remote and push, so short-lived installation tokens
// never go stale during a long run.
type TokenSource func(ctx context.Context) (string, error)

// Options configure a Git. They come from the composition root; this package
// reads no process environment of its own.
type Options struct {
	// GitPath is the git binary: absolute, or a name looked up in PATH.
	// Empty means "git".
	GitPath string
	// PATH is the search path git and its helpers (git-remote-https, ssh)
	// run with; the host's PATH, handed down by the caller.
	PATH string
	// HomeDir is a directory the bot owns; git runs with HOME and the XDG
	// directories inside it so no user config, ignore or attributes file is
	// read. Created when missing.
	HomeDir string
	// Identity is the committer of every commit and the author unless
	// RepoIdentity finds one. Zero means BotName <BotEmail>.
	Identity Identity
	// RepoIdentity makes the repository's own user.name and user.email the
	// author of checkpoint and merge commits when both are set in the
	// repository's config (global config is never read). Local runs use it so
	// checkpoints carry the user's name; the committer stays the bot.
	RepoIdentity bool
	// TokenSource authenticates fetch and push over HTTP(S). Nil means
	// anonymous (local runs, file remotes).
	TokenSource TokenSource
	// AllowFileProtocol permits file:// and local-path remotes. Off, git
	// refuses them, so a crafted clone URL cannot read the host's disk.
	AllowFileProtocol bool
	// Timeout bounds each git invocation; zero means only ctx bounds it.
	Timeout time.Duration
}

// Git runs git for the product. It is safe for concurrent use.
type Git struct {
	path     string
	pathEnv  string
	home     string
	identity Identity
	opts     Options

	mirrorLocks keyedMutex
	identities  sync.Map // worktree -> the author env of its commits (authorEnv)
}

// New validates opts and prepares the bot's HOME.
func New(opts Options) (*Git, error) {
	if opts.HomeDir == "" {
		return nil, errors.New("gitops: Options.HomeDir is required (a directory the bot owns)")
	}
	home, err := filepath.Abs(opts.HomeDir)
	if err != nil {
		return nil, fmt.Errorf("gitops: home dir %q: %w", opts.HomeDir, err)
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("gitops: create home dir: %w", err)
	}
	path, err := lookPath(opts.GitPath, opts.PATH)
	if err != nil {
		return nil, err
	}
	id := opts.Identity
	if id.Name == "" || id.Email == "" {
		id = Identity{Name: BotName, Email: BotEmail}
	}
	return &Git{path: path, pathEnv: opts.PATH, home: home, identity: id, opts: opts}, nil
}

// lookPath resolves name against pathList without consulting the process
// environment, because the child's PATH is the caller's to choose.
func lookPath(name, pathList string) (string, error) {
	if name == "" {
		name = "git"
	}
	if strings.Contains(name, string(filepath.Separator)) {
		if isExecutable(name) {
			return filepath.Abs(name)
		}
		return "", fmt.Errorf("gitops: git binary %q is not an executable file", name)
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if isExecutable(p) {
			return filepath.Abs(p)
		}
	}
	return "", fmt.Errorf("gitops: %q not found in PATH %q: install git or set the git path", name, pathList)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// keyedMutex serialises work per key (a mirror directory): concurrent
// fetches into one repository would fight over ref locks.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

func (k *keyedMutex) lock(key string) func() {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = map[string]*sync.Mutex{}
	}
	l, ok := k.locks[key]
	if !ok {
		l = &sync.Mutex{}
		k.locks[key] = l
	}
	k.mu.Unlock()
	l.Lock()
	return l.Unlock
}
