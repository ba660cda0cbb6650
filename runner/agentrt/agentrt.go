// Package agentrt is the agent runtime the bot provides for image jails.
//
// A runtime is a directory as scripts/install-agent-clis.sh leaves it:
// the agent CLI packages under node_modules (npm's layout under one
// prefix) and a Node runtime at bin/node (a copy of the host's). When a
// CLI node runs in an image that lacks the CLI, or lacks the node its CLI
// needs, the bot runs the CLI from the runtime: node_modules is bound
// read-only at JailDir/node_modules, and the program that starts it
// (bin/node for a Node script, the CLI itself for a native one such as
// Claude Code's) runs from JailLib.
//
// The runtime's programs are the host's, linked against the host's
// glibc, and the image's libraries are not the host's (or not glibc at
// all). So the bot ports every dynamically linked program it starts
// (portELF): a copy that names a copy of the host's loader in JailLib as
// its interpreter and finds its libraries (copies of the host's, found
// once) beside itself. The kernel starts the copy as it would the
// original: /proc/self/exe, and so Node's process.execPath, is the copy,
// and the CLI's own child Node processes load the same way; nothing
// such as LD_LIBRARY_PATH is set, so the programs the agent starts in the
// image (its shell, the project's tools) load the image's libraries as
// they would without the runtime. Ported copies are kept under a cache
// directory of the bot's, one directory per program and host loader.
//
// A runtime holds programs and packages only: no credentials. The CLI's
// key reaches the CLI's process through its environment, as without the
// runtime.
package agentrt

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// Where a runtime shows in a jail. JailLib is short: the loader's path
// and the library path share the bytes of the host's loader name in each
// ported program. They are the sandbox's, which the image store gives
// every image as mount points (sandbox.MountPoints).
const (
	JailDir = sandbox.AgentRuntimePath
	JailLib = sandbox.AgentLibPath
)

// jailLoader is the ported programs' interpreter.
const jailLoader = JailLib + "/ld.so"

// Runtime is one runtime directory and the cache its ported programs go
// to. It is safe for concurrent use.
type Runtime struct {
	dir   string // canonical
	cache string
	mu    sync.Mutex
}

// New opens the runtime at dir, keeping ported programs under cache, an
// absolute directory created when first needed. dir must hold bin/node
// and node_modules.
func New(dir, cache string) (*Runtime, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("agent runtime %q: not an absolute path; give agents.runtime as an absolute directory", dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("agent runtime: %w", err)
	}
	for _, p := range []string{"bin/node", "node_modules"} {
		if _, err := os.Stat(filepath.Join(real, p)); err != nil {
			return nil, fmt.Errorf("agent runtime %s has no %s (scripts/install-agent-clis.sh DIR makes one): %w", dir, p, err)
		}
	}
	return &Runtime{dir: real, cache: cache}, nil
}

// Detect returns the runtime a host program belongs to: the prefix P of
// a program under P/node_modules (a CLI npm installed there) when P has
// bin/node; "" otherwise.
func Detect(program string) string {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		return ""
	}
	for _, p := range []string{program, real} {
		tree, ok := sandbox.NodeModulesTree(p)
		if !ok || tree == "/node_modules" {
			continue
		}
		prefix := filepath.Dir(tree)
		if fi, err := os.Stat(filepath.Join(prefix, "bin", "node")); err == nil && fi.Mode().IsRegular() {
			return prefix
		}
	}
	return ""
}

// ErrNotInRuntime: the runtime has no such CLI.
var ErrNotInRuntime = errors.New("not in the agent runtime")

// Invocation is how a jail runs a CLI from the runtime: the programs that
// replace the command's first word, and the binds they need.
type Invocation struct {
	Argv  []string
	Binds []sandbox.Bind
	// Loader is the host's loader the ported program's copy stands for
	// (see Unfit); "" when nothing is ported (a static CLI).
	Loader string
}

// Invocation finds name (a command's first word: a program name, looked
// up in node_modules/.bin, or a path into the runtime) and returns how a
// jail runs it from the runtime, porting what it starts.
func (r *Runtime) Invocation(name string) (Invocation, error) {
	p, err := r.find(name)
	if err != nil {
		return Invocation{}, err
	}
	rel, _ := filepath.Rel(filepath.Join(r.dir, "node_modules"), p)
	inJail := filepath.Join(sandbox.AgentModulesPath, rel)
	modules := sandbox.Bind{Src: filepath.Join(r.dir, "node_modules"), Dst: sandbox.AgentModulesPath}
	script, err := isScript(p)
	if err != nil {
		return Invocation{}, err
	}
	start := p
	if script {
		start = filepath.Join(r.dir, "bin", "node")
	}
	info, err := readELF(start)
	if err != nil {
		return Invocation{}, fmt.Errorf("agent runtime: %w", err)
	}
	if info.interp == "" { // static: runs anywhere as it is
		if script {
			return Invocation{}, fmt.Errorf("agent runtime: %s is statically linked; only a dynamically linked node is supported: copy the host's node there (scripts/install-agent-clis.sh DIR does)", start)
		}
		return Invocation{Argv: []string{inJail}, Binds: []sandbox.Bind{modules}}, nil
	}
	lib, err := r.port(start, info)
	if err != nil {
		return Invocation{}, err
	}
	binds := []sandbox.Bind{modules, {Src: lib, Dst: JailLib}}
	prog := filepath.Join(JailLib, filepath.Base(start))
	if script {
		return Invocation{Argv: []string{prog, inJail}, Binds: binds, Loader: info.interp}, nil
	}
	return Invocation{Argv: []string{prog}, Binds: binds, Loader: info.interp}, nil
}

// find resolves name to a file of node_modules, links resolved.
func (r *Runtime) find(name string) (string, error) {
	modules := filepath.Join(r.dir, "node_modules")
	var p string
	switch {
	case filepath.IsAbs(name):
		p = name
	case strings.Contains(name, "/"):
		return "", fmt.Errorf("%s: %w", name, ErrNotInRuntime)
	default:
		p = filepath.Join(modules, ".bin", name)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, ErrNotInRuntime)
	}
	if !strings.HasPrefix(real, modules+"/") {
		return "", fmt.Errorf("%s (%s is outside %s): %w", name, real, modules, ErrNotInRuntime)
	}
	return real, nil
}

// isScript reports whether p starts with #! and, if so, that it is run
// by node.
func isScript(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	line := make([]byte, 256)
	n, err := io.ReadFull(f, line)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return false, err
	}
	line = line[:n]
	if !bytes.HasPrefix(line, []byte("#!")) {
		return false, nil
	}
	first, _, _ := bytes.Cut(line, []byte("\n"))
	fields := strings.Fields(string(first[2:]))
	for _, f := range fields {
		if filepath.Base(f) == "node" {
			return true, nil
		}
	}
	return false, fmt.Errorf("agent runtime: %s is a script run by %q, not node: the runtime serves npm CLIs only; use an image that has this CLI", p, strings.Join(fields, " "))
}

// port returns the directory holding a ported copy of program, named
// as the program, with the host's loader and libraries, making it the
// first time.
func (r *Runtime) port(program string, info elfInfo) (string, error) {
	if !filepath.IsAbs(r.cache) {
		return "", fmt.Errorf("agent runtime: no cache directory for ported programs (%q)", r.cache)
	}
	key, err := fingerprint(program, info.interp)
	if err != nil {
		return "", fmt.Errorf("agent runtime: %w", err)
	}
	dir := filepath.Join(r.cache, filepath.Base(program)+"-"+key)
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(program))); err == nil {
		touch(dir)
		return dir, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := os.Stat(filepath.Join(dir, filepath.Base(program))); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(r.cache, 0o755); err != nil {
		return "", fmt.Errorf("agent runtime: %w", err)
	}
	tmp, err := os.MkdirTemp(r.cache, ".port-*")
	if err != nil {
		return "", fmt.Errorf("agent runtime: %w", err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return "", fmt.Errorf("agent runtime: %w", err)
	}
	if err := fill(tmp, program, info); err != nil {
		return "", fmt.Errorf("agent runtime: port %s: %w", program, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, statErr := os.Stat(filepath.Join(dir, filepath.Base(program))); statErr == nil {
			return dir, nil // another bot process ported it meanwhile
		}
		return "", fmt.Errorf("agent runtime: %w", err)
	}
	sweepPorts(r.cache, filepath.Base(program), dir)
	return dir, nil
}

// portIdle is how long a ported copy of a program that has since changed
// is kept after its last use: a jail may still run it (an agent session
// lasts hours at most), and a copy is hundreds of megabytes.
const portIdle = 24 * time.Hour

// touch records a use of a ported copy, which sweepPorts counts from.
func touch(dir string) {
	now := time.Now()
	_ = os.Chtimes(dir, now, now)
}

// sweepPorts removes the copies of program in cache other than current
// unused for portIdle: those of an older program or host loader.
func sweepPorts(cache, program, current string) {
	old, _ := filepath.Glob(filepath.Join(cache, program+"-*"))
	for _, d := range old {
		if fi, err := os.Stat(d); d != current && err == nil && fi.IsDir() && time.Since(fi.ModTime()) > portIdle {
			_ = os.RemoveAll(d)
		}
	}
}

// fill writes the ported program, its loader and its libraries into dir.
func fill(dir, program string, info elfInfo) error {
	libs, err := libClosure(info.needed)
	if err != nil {
		return err
	}
	libs[filepath.Base(jailLoader)] = info.interp
	for name, src := range libs {
		if err := copyFile(filepath.Join(dir, name), src); err != nil {
			return err
		}
	}
	return portELF(program, filepath.Join(dir, filepath.Base(program)), jailLoader)
}

// fingerprint names the state of a program and the host's loader (path,
// size, modification time).
func fingerprint(paths ...string) (string, error) {
	h := sha256.New()
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16], nil
}

// Unfit says why inv cannot serve in an image, "" when it can. has
// reports whether the image holds an executable file at a path. The
// runtime needs /bin/sh (every CLI's shell tool starts the image's
// shell), and a ported program refuses musl-based images (Alpine): it is
// the host's glibc build, and the bot does not run it on a musl
// userland, where it is untested.
func Unfit(has func(string) bool, inv Invocation) string {
	if musl := "/lib/ld-musl-" + machine() + ".so.1"; inv.Loader != "" && has(musl) && !has(inv.Loader) {
		return fmt.Sprintf("the image is musl-based (it has %s and no glibc loader %s), and the bot's agent runtime is a glibc build", musl, inv.Loader)
	}
	if !has("/bin/sh") {
		return "the image has no /bin/sh, which the agent CLIs' shell tools start"
	}
	return ""
}

// machine is the host's architecture as the kernel and the toolchains
// name it (x86_64, aarch64): in the names of loaders and library
// directories.
func machine() string {
	if a, ok := map[string]string{"amd64": "x86_64", "arm64": "aarch64"}[runtime.GOARCH]; ok {
		return a
	}
	return runtime.GOARCH
}

// copyFile copies src to p as a stream.
func copyFile(p, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeNew(p, 0o755, func(out *os.File) error {
		_, err := io.Copy(out, in)
		return err
	})
}
