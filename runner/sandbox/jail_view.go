package sandbox

import (
	"cmp"
	"path/filepath"
	"slices"
	"strings"
)

// The jail's view of a run. Inside a jail no directory of the run is at
// its host path: each is bound at a fixed path that names nothing of the
// host (neither the data dir, nor the run, the installation or the
// repository), the same in every jail, on the host's root or an image's:
//
//	WorkspacePath     the worktree, read-write (its .git names GitPath)
//	StagePath         the node's stage directory (KILROY_STAGE_*)
//	ManagedRootsPath  the run's policy-managed-roots/
//	CachePath         the repository's caches (GOMODCACHE, ... point here)
//	GitPath           the repository's git directory, read-only
//	HomePath          HOME: a private tmpfs
//
// The bot gives a jailed Cmd its directory, environment and arguments as
// it knows them, in host paths; Run rewrites every host path of a bound
// directory, or below one, to where the jail shows it (pathView), so
// KILROY_STAGE_STATUS_PATH, GOMODCACHE or an agent CLI's prompt file name
// what the node sees, and a HOME outside them becomes HomePath. What the
// bot reads back in host terms (the status file, findings) it maps with
// Jail.Path or WorkspacePath. The operator's read-only directories and the
// host's toolchains stay at their own paths, as programs find their files
// by them.
const (
	WorkspacePath    = "/workspace"
	StagePath        = "/kilroy/stage"
	ManagedRootsPath = "/kilroy/managed-roots"
	CachePath        = "/kilroy/cache"
	GitPath          = "/kilroy/git"
	HomePath         = "/home/" + JailUser
)

// kilroyDir holds the jail's fixed paths but the workspace; nothing of the
// host is bound there.
const kilroyDir = "/kilroy"

// gitWorktreeName is the name the worktree's registration (its git
// directory under GitPath/worktrees) has in the jail.
const gitWorktreeName = "workspace"

// jailRoot is a directory of the run a jail shows read-write: host is
// the bot's path of it, dst the jail's. One within another (nested) is
// shown through it, and dst says where.
type jailRoot struct {
	host, dst string
	required  bool // a cache is not: missing, it is left out
	nested    bool
}

// roots are j's read-write directories: the workspace, the stage
// directory, the managed roots and the caches.
func (j *Jail) roots() []jailRoot {
	var out []jailRoot
	add := func(host, dst string, required bool) {
		if host != "" && filepath.IsAbs(host) {
			out = append(out, jailRoot{host: filepath.Clean(host), dst: dst, required: required})
		}
	}
	add(j.Workspace, WorkspacePath, true)
	add(j.Stage, StagePath, true)
	add(j.ManagedRoots, ManagedRootsPath, true)
	add(j.Caches, CachePath, false)
	for i, r := range out {
		for _, o := range out {
			if o.host != r.host && within(r.host, o.host) && !o.nested {
				out[i].dst = filepath.Join(o.dst, strings.TrimPrefix(r.host, o.host+"/"))
				out[i].nested = true
				break
			}
		}
	}
	return out
}

// pathView maps host paths of a jail's roots to the jail's.
type pathView []pathPair

type pathPair struct{ host, dst string }

// view is j's pathView: each root by the path given and by its canonical
// form, the longest first, so a nested root's own entry wins.
func (j *Jail) view() pathView {
	var v pathView
	for _, r := range j.roots() {
		v = append(v, pathPair{r.host, r.dst})
		if c := j.Sandbox.paths.resolve(r.host).canon; c != r.host && c != "/" {
			v = append(v, pathPair{c, r.dst})
		}
	}
	slices.SortStableFunc(v, func(a, b pathPair) int { return cmp.Compare(len(b.host), len(a.host)) })
	return v
}

// Path is where the jail shows host path p: p itself when no root of j
// holds it, or j is nil (no sandbox).
func (j *Jail) Path(p string) string {
	if j == nil || !filepath.IsAbs(p) {
		return p
	}
	if q, ok := j.view().path(filepath.Clean(p)); ok {
		return q
	}
	return p
}

// path maps p, a clean absolute path, when a root holds it.
func (v pathView) path(p string) (string, bool) {
	for _, pp := range v {
		if within(p, pp.host) {
			return pp.dst + strings.TrimPrefix(p, pp.host), true
		}
	}
	return "", false
}

// rewrite replaces in s every host path of a root, or below one, with the
// jail's: values that are lists (PATH), options (MAVEN_OPTS's
// -Dmaven.repo.local=...) or a shell command. A path counts where it
// starts after nothing that could be part of a path and ends where a name
// does, so /runs/r1 is not rewritten inside /runs/r10 or /x/runs/r1.
func (v pathView) rewrite(s string) string {
	if len(v) == 0 || !strings.Contains(s, "/") {
		return s
	}
	var b strings.Builder
	done := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '/' || (i > 0 && (nameByte(s[i-1]) || s[i-1] == '/')) {
			continue
		}
		for _, pp := range v {
			rest := s[i:]
			if strings.HasPrefix(rest, pp.host) && (len(rest) == len(pp.host) || !nameByte(rest[len(pp.host)])) {
				b.WriteString(s[done:i])
				b.WriteString(pp.dst)
				done = i + len(pp.host)
				i = done - 1
				break
			}
		}
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// nameByte reports whether c may be part of a file name next to a path
// (a letter, a digit, one of ._-+~@%, any byte of a UTF-8 sequence).
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("._-+~@%", c) >= 0 || c >= 0x80
}

// jailed is a Cmd as its jail shows it.
type jailed struct {
	env  []string // every value rewritten; HOME the jail's
	argv []string // every argument rewritten, the program's path too
	dir  string   // the working directory, "" when none was given
}

// jailed rewrites c's environment, argv (its program resolved to path
// already) and directory for j (see pathView). HOME stays where a root
// shows it (an agent CLI's own, in its stage directory); any other,
// the host's, or none, becomes HomePath, a private tmpfs.
func (j *Jail) jailed(c Cmd, argv []string) jailed {
	v := j.view()
	out := jailed{env: make([]string, 0, len(c.Env)+1), argv: make([]string, len(argv)), dir: c.Dir}
	home := HomePath
	for _, kv := range c.Env {
		k, val, ok := strings.Cut(kv, "=")
		if !ok {
			out.env = append(out.env, kv)
			continue
		}
		val = v.rewrite(val)
		if k == "HOME" {
			if v.inDst(val) {
				home = val
			}
			continue
		}
		out.env = append(out.env, k+"="+val)
	}
	out.env = append(out.env, "HOME="+home)
	for i, a := range argv {
		out.argv[i] = v.rewrite(a)
	}
	if c.Dir != "" {
		if d, ok := v.path(filepath.Clean(c.Dir)); ok {
			out.dir = d
		}
	}
	return out
}

// inDst reports whether p, a path in the jail, lies in a root's dst.
func (v pathView) inDst(p string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	p = filepath.Clean(p)
	return slices.ContainsFunc(v, func(pp pathPair) bool { return within(p, pp.dst) })
}

// reserved reports whether dst, a path in the jail, is one of the jail's
// own (the workspace, /kilroy), where nothing of the host is bound: a
// host directory there would land in the worktree or a stage directory.
func reserved(dst string) bool {
	return within(dst, WorkspacePath) || within(dst, kilroyDir)
}
