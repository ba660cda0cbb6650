package sandbox

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor/safefile"
)

// Inside a jail every node process runs as this unprivileged user.
const (
	JailUID  = 1000
	JailGID  = 1000
	JailUser = "kilroy"
)

// Config is the server-wide sandbox policy, read once at the composition
// root. The zero value is the documented default: network public,
// DefaultLimits.
type Config struct {
	// Bwrap is bubblewrap's program; empty means bwrap looked up in PATH.
	Bwrap string
	// PATH is where it is looked up (the host's PATH).
	PATH string
	// Network is what nodes reach (see Network); "" is NetworkPublic.
	Network Network
	// NetworkAllow are ranges nodes reach with NetworkPublic although they
	// are private or link-local (a company's package mirror, say).
	NetworkAllow []netip.Prefix
	// Pasta is pasta's program (NetworkPublic); empty means pasta looked up
	// in PATH.
	Pasta string
	// Nsenter is nsenter's program, which a bot that is not root needs
	// for NetworkPublic; empty means nsenter looked up in PATH.
	Nsenter string
	Limits  Limits
	// Hidden are absolute paths no node may see, whatever else is mounted:
	// the data dir, the App key file, the webhook secret file, the server
	// config, the bot's own git HOME.
	Hidden []string
	// ReadOnly are host directories the operator shows every node
	// read-only (a toolchain outside the system directories, say).
	ReadOnly []string
	// StateDir is a directory the bot owns where the sandbox keeps the
	// passwd and group files it shows nodes. Created when missing.
	StateDir string
	// OneRun says the Sandbox serves a single run after its SelfTest (a
	// local `kilroy-bot run`): with network public, the self-test's jail
	// and the run's share one namespace, and none is made ahead (see
	// netPool).
	OneRun bool
}

// Sandbox starts node processes in a bubblewrap jail: new user, pid, ipc,
// uts and cgroup namespaces (and net when the policy turns it off), a
// mount namespace built by Jail, resource limits, and every process killed
// when the node's main process ends. It is safe for concurrent use.
type Sandbox struct {
	bwrap    string
	network  Network
	nets     *netPool // the runs' network namespaces; nil unless network is public
	limits   Limits
	hidden   []string
	readOnly []string
	etc      string   // the /etc nodes see (etcView)
	etcLock  *os.File // holds etc for the Sandbox's life
	resolv   string   // the resolv.conf image jails see with network public (writeResolv)
	dev      string   // the /dev host jails bind (devDir); "": the devices one by one
	paths    *pathCache
	links    *linkRoots // what the programs on PATH link to
	cgroups  *cgroupRoot
	prewarm  *prewarmPool
	image    *Image // the jails' root filesystem; nil: the host's (WithImage)
	// noUserns: the installed bwrap has --disable-userns (0.8.0 and
	// later), and jails get it (bwrapDisablesUserns).
	noUserns bool
}

// New prepares a Sandbox; it does not check that namespaces work (see
// SelfTest).
func New(cfg Config) (*Sandbox, error) {
	s := &Sandbox{limits: cfg.Limits.withDefaults(), paths: newPathCache(pathTTL), links: &linkRoots{}}
	if err := s.initNetwork(cfg); err != nil {
		return nil, err
	}
	var err error
	if s.bwrap, err = findTool(cfg.Bwrap, "bwrap", cfg.PATH,
		"install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)"); err != nil {
		return nil, err
	}
	s.noUserns = bwrapDisablesUserns(s.bwrap)
	for _, h := range cfg.Hidden {
		if h == "" {
			continue
		}
		if !filepath.IsAbs(h) {
			return nil, fmt.Errorf("sandbox: hidden path %q is not absolute", h)
		}
		s.hidden = append(s.hidden, canonical(h))
	}
	for _, d := range cfg.ReadOnly {
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("sandbox: read-only path %q is not absolute", d)
		}
		s.readOnly = append(s.readOnly, filepath.Clean(d))
	}
	if cfg.StateDir == "" {
		return nil, errors.New("sandbox: Config.StateDir is required (a directory the bot owns)")
	}
	var resolv []byte
	if s.nets != nil {
		resolv = publicResolv()
	}
	if s.etc, s.etcLock, err = etcView(cfg.StateDir, "/etc", s.hidden, resolv); err != nil {
		return nil, err
	}
	// Opened without following links for every jail (plan): the state
	// dir may lie below a link of the host's.
	s.etc = canonical(s.etc)
	if s.nets != nil {
		if s.resolv, err = writeResolv(cfg.StateDir); err != nil {
			return nil, err
		}
		s.resolv = canonical(s.resolv) // opened as s.etc is
	}
	s.dev = devDir(cfg.StateDir)
	s.cgroups = findCgroupRoot(s.limits)
	s.prewarm = &prewarmPool{ttl: prewarmTTL}
	return s, nil
}

// Close ends the Sandbox's prewarmed jails: it kills and reaps their
// bwrap processes and removes their cgroups, and none is made after. The
// Sandbox stays usable; its jailed Runs then start cold. Without Close,
// prewarmed jails end after prewarmTTL. A nil Sandbox (no sandbox) has
// nothing to close.
func (s *Sandbox) Close() {
	if s != nil {
		s.prewarm.close()
		s.nets.closeIdle(true)
	}
}

// CloseAtExit is Close for a process about to exit (kilroy-bot run and
// resume): the runs' pastas are killed but not waited for. A pasta takes
// 30-60 ms to be reaped after SIGKILL (its tap device goes), which would
// only hold the exit back; the process's exit hands them to init, which
// reaps them.
func (s *Sandbox) CloseAtExit() {
	if s != nil {
		s.prewarm.close()
		s.nets.closeIdle(false)
	}
}

// Limits reports the limits every node gets.
func (s *Sandbox) Limits() Limits { return s.limits }

// ProcessLimitHolds reports whether Limits.Processes binds: through a
// cgroup, or RLIMIT_NPROC, which the kernel does not apply to root.
func (s *Sandbox) ProcessLimitHolds() bool { return s.cgroups != nil || os.Geteuid() != 0 }

// Jail is what one node process may see besides the system directories.
// Its read-write directories are the run's, each shown at a fixed path of
// the jail's own (jail_view.go).
type Jail struct {
	Sandbox *Sandbox
	// Workspace is the run's worktree, shown at WorkspacePath: read-write,
	// except its .git and the repository metadata it points at, which are
	// read-only (at GitPath).
	Workspace string
	// Stage is the node's stage directory, shown read-write at StagePath;
	// created when missing.
	Stage string
	// ManagedRoots is the run's policy-managed-roots directory, shown
	// read-write at ManagedRootsPath; created when missing.
	ManagedRoots string
	// Caches is the run's cache directory (the repository's caches:
	// GOMODCACHE, GOCACHE, CARGO_HOME, ... point into it), shown
	// read-write at CachePath; created when missing, left out when it
	// cannot be.
	Caches string
	// ReadOnly are further paths bound read-only, at their own paths. They
	// come from the bot's own configuration only (NodeJail): nothing in a
	// node's environment decides a mount.
	ReadOnly []string
	// Binds are host directories shown read-only at fixed paths of the
	// jail (image_agentrt.go).
	Binds []Bind
	// Run names the run the jail belongs to: with network public, the
	// jails of one run share its network namespace. Jails of no run share
	// the Sandbox's own.
	Run string
}

func findTool(given, name, pathList, fix string) (string, error) {
	if given != "" {
		name = given
	}
	p, err := lookPath([]string{"PATH=" + pathList}, "", name)
	if err != nil {
		return "", fmt.Errorf("sandbox: %s not found (%v): %s", name, err, fix)
	}
	return filepath.Abs(p)
}

// writeIdentity writes the passwd and group files nodes see into dir:
// root and the jail user, nothing of the host's accounts.
func writeIdentity(dir string) error {
	uid, gid := strconv.Itoa(JailUID), strconv.Itoa(JailGID)
	files := map[string]string{
		"passwd": "root:x:0:0:root:/root:/bin/sh\n" +
			JailUser + ":x:" + uid + ":" + gid + ":kilroy-bot node:/home/" + JailUser + ":/bin/sh\n" +
			"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"group": "root:x:0:\n" + JailUser + ":x:" + gid + ":\nnogroup:x:65534:\n",
	}
	for name, body := range files {
		if err := safefile.WriteFile(filepath.Join(dir, name), []byte(body)); err != nil {
			return fmt.Errorf("sandbox: %w", err)
		}
	}
	return nil
}

// canonical cleans an absolute path and resolves its symlinks where it
// exists, so that paths compare as the kernel sees them.
func canonical(p string) string {
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if r, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(r, filepath.Base(p))
	}
	return p
}

// handshakeArgs end the options of every jail. bwrap blocks its sandbox on
// a pipe (--block-fd) until start has set the limits and cgroups on the
// sandbox's first process, whose pid it reports on another (--info-fd):
// nothing of the node runs before that, and no helper program is started
// on the way. The host's TMPDIR is not there: temporary files go to the
// private /tmp (set after the node's environment, so it wins).
var handshakeArgs = []string{"--setenv", "TMPDIR", "/tmp", "--block-fd", "3", "--info-fd", "4"}

// options are bwrap's options for one process of j that runs program (its
// host path) in dir with env, both as the jail shows them (Jail.jailed):
// namespaces, mounts and working directory, the same for a cold start
// and a prewarmed one, and the sources of its binds, which bwrap must get
// as descriptors firstBindFD, firstBindFD+1, ... The caller closes them
// once bwrap has them.
func (j *Jail) options(env []string, dir, program string) (opts []string, files []*os.File, err error) {
	s := j.Sandbox
	if _, bound := j.inBinds(program); filepath.IsAbs(program) && !j.inImage(program) && !bound {
		// The program itself is visible, read-only, wherever it lives (an
		// operator's agent script, say), with the package tree it runs from.
		jj := *j
		jj.ReadOnly = append(slices.Clip(j.ReadOnly), programFiles(program)...)
		j = &jj
	}
	ms, err := j.plan(env)
	if err != nil {
		return nil, nil, err
	}
	var out, readOnly, binds []string
	var iv imageView
	if s.image != nil {
		// The image goes first: everything else is mounted on it.
		if iv, err = j.imageMounts(ms); err != nil {
			closeMounts(ms)
			return nil, nil, err
		}
		ms, readOnly = iv.jail, iv.readOnly
		out, files = args(iv.mounts, 0, nil)
	}
	out = append(out, iv.namespaceArgs(s.namespaceArgs())...)
	tmpSize := s.limits.MemoryBytes / 2
	binds, files = args(ms, tmpSize, files)
	out = append(out, binds...)
	out = append(out, shmArgs(tmpSize)...)
	for _, d := range readOnly {
		out = append(out, "--remount-ro", d)
	}
	// bwrap's root is a tmpfs of the kernel's default size (half the
	// host's memory) that the jail user may write; nothing is meant to be
	// written there, and where no cgroup charges tmpfs pages to the node
	// it would be memory without a bound. Made read-only after the mounts
	// above made their mount points in it. An image bound at "/" hides
	// it (imageMounts lists "/" when it splits the image there).
	if s.image == nil {
		out = append(out, "--remount-ro", "/")
	}
	if dir != "" {
		out = append(out, "--chdir", dir)
	}
	return out, files, nil
}

// namespaceArgs are bwrap's options besides the mounts: every namespace
// but the network's, which is netArgs' (network.go), no user namespace
// of the node's own where bwrap can forbid it (--disable-userns: a node
// cannot nest namespaces to rearrange its mounts or reach kernel code
// only a namespace's root reaches), the jail user, a fresh /proc of the
// node's own pid namespace, a minimal /dev (devDir's, or devArgs), and the sandbox
// killed with the bot.
func (s *Sandbox) namespaceArgs() []string {
	a := []string{"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"}
	if s.noUserns {
		a = append(a, "--disable-userns")
	}
	a = append(a, s.netArgs()...)
	a = append(a,
		"--uid", strconv.Itoa(JailUID), "--gid", strconv.Itoa(JailGID),
		"--hostname", "kilroy-sandbox",
		"--die-with-parent",
		"--proc", "/proc")
	if s.dev != "" && s.image == nil {
		// An image's /dev is a tmpfs made read-only after the
		// devices' binds (image_root.go): bwrap would make a /dev
		// bound whole nodev then.
		return append(a, devBindArgs(s.dev)...)
	}
	return append(a, devArgs...)
}

// devArgs make the jail's /dev where no devDir serves (a bot that is not
// root, an image jail): the devices of devNodes, bound, and the links of
// devLinks (/dev/shm is a bounded tmpfs: shmArgs). bwrap's --dev would
// add /dev/tty and a private devpts (a node has no terminal) at two more
// binds: every bind costs each start a pass over the mount table.
var devArgs = func() []string {
	var a []string
	for _, n := range devNodes {
		a = append(a, "--dev-bind", "/dev/"+n, "/dev/"+n)
	}
	for _, l := range devLinks {
		a = append(a, "--symlink", l[1], "/dev/"+l[0])
	}
	return a
}()

// shmMax bounds /dev/shm, as container engines do by default.
const shmMax = 64 << 20

// shmArgs make /dev/shm a tmpfs of its own holding at most shmMax bytes,
// or tmpSize when that is smaller (0: no memory limit, shmMax).
func shmArgs(tmpSize int64) []string {
	size := int64(shmMax)
	if tmpSize > 0 && tmpSize < size {
		size = tmpSize
	}
	return []string{"--size", strconv.FormatInt(size, 10), "--tmpfs", "/dev/shm"}
}

// toolchainVars name directories a node reads its toolchains from. Their
// values in the bot's own environment are shown read-only; see NodeJail.
var toolchainVars = []string{"GOROOT", "RUSTUP_HOME", "JAVA_HOME", "MAVEN_HOME", "M2_HOME", "NVM_DIR",
	"PYENV_ROOT", "VOLTA_HOME", "VIRTUAL_ENV"}

// NodeJail is the jail of one node process: the workspace, the stage
// directory and the run's policy-managed roots read-write, the run's cache
// directory (caches, the repository's own: runner/caches) read-write, each
// at its fixed path in the jail (jail_view.go), and
// read-only the toolchains of the bot's own environment: its PATH
// directories and toolchainVars, as NodeEnv gives them without a policy
// (none in a jail on an image root: the image's are there).
// Nothing the repository sets becomes a mount: its artifact policy's
// variables (VIRTUAL_ENV=/proc, say) stay variables, and a path they name
// is not in the jail unless the bot's own configuration put it there.
// host is the bot's environment (HostEnv); a nil s returns nil (no
// sandbox).
func NodeJail(s *Sandbox, host map[string]string, workspace, stageDir, managedRoots, caches string) *Jail {
	if s == nil {
		return nil
	}
	j := &Jail{Sandbox: s, Workspace: workspace, Stage: stageDir, ManagedRoots: managedRoots, Caches: caches,
		ReadOnly: slices.Clone(s.readOnly)}
	j.Run = runOf(workspace, managedRoots)
	if s.image == nil {
		// On an image root, PATH and the toolchains are the image's:
		// nothing of the host's is shown for them.
		dirs := toolchainDirs(NodeEnv(EnvSpec{Host: host}))
		j.ReadOnly = append(j.ReadOnly, dirs...)
		j.ReadOnly = append(j.ReadOnly, s.links.of(dirs)...)
	}
	return j
}

// toolchainDirs are the absolute directories of env's PATH and toolchain
// variables.
func toolchainDirs(env []string) []string {
	path, _ := Lookup(env, "PATH")
	dirs := filepath.SplitList(path)
	for _, v := range toolchainVars {
		if d, ok := Lookup(env, v); ok {
			dirs = append(dirs, d)
		}
	}
	return slices.DeleteFunc(dirs, func(d string) bool { return !filepath.IsAbs(d) })
}

// programFiles are what a program needs visible to run: its file and, for
// a program installed from the npm registry (an agent CLI), the
// node_modules tree it resolves into, whose packages it loads at run time.
func programFiles(path string) []string {
	out := []string{path}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return out
	}
	if real != path {
		out = append(out, real)
	}
	for _, p := range []string{path, real} {
		if tree, ok := NodeModulesTree(p); ok {
			out = append(out, tree)
		}
	}
	return out
}

// NodeModulesTree is the outermost node_modules directory path p lies in:
// the tree an npm-installed program resolves its packages into (a
// package's own nested node_modules is part of it). ok is false when p is
// in none.
func NodeModulesTree(p string) (tree string, ok bool) {
	i := strings.Index(p, "/node_modules/")
	if i < 0 {
		return "", false
	}
	return p[:i+len("/node_modules")], true
}
