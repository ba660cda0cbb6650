package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/attractor"
	"github.com/kilroy-bot/kilroy-bot/runner/caches"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
	appserver "github.com/kilroy-bot/kilroy-bot/server"
)

// sandboxPolicy is the `sandbox:` section of the server policy file:
//
//	sandbox:
//	  network: public        # default (true also); none (false): loopback only; host: insecure
//	  network_allow: [10.1.2.0/24] # private or link-local ranges public still reaches
//	  read_only: [/srv/tools] # host directories every node sees read-only
//	  limits:                # per node; defaults in docs/serve.md
//	    processes: 512
//	    memory: 3GiB
//	    file_size: 2GiB
//	    cpu_time: 2h
//	  caches:                # the runs' toolchain caches, never the host's
//	    scope: repository    # default; or installation
//	    max_bytes: 10GiB     # default; or off
type sandboxPolicy struct {
	Network      networkSetting `yaml:"network"`
	NetworkAllow []string       `yaml:"network_allow"`
	ReadOnly     []string       `yaml:"read_only"`
	Limits       sandboxLimits  `yaml:"limits"`
	Caches       sandboxCaches  `yaml:"caches"`
	Disk         sandboxDisk    `yaml:"disk"`
}

// sandboxCaches is `sandbox.caches`: what shares a cache directory under
// <data-dir>/caches and how large one may grow before the retention sweep
// removes it.
type sandboxCaches struct {
	Scope    string `yaml:"scope"`
	MaxBytes string `yaml:"max_bytes"`
}

// defaultCacheMaxBytes is sandbox.caches.max_bytes by default: room for
// a large monorepo's Go modules and build cache.
const defaultCacheMaxBytes = 10 << 30

// scope is the cache scope the setting names.
func (c sandboxCaches) scope() (caches.Scope, error) {
	switch c.Scope {
	case "", string(caches.ScopeRepository):
		return caches.ScopeRepository, nil
	case string(caches.ScopeInstallation):
		return caches.ScopeInstallation, nil
	}
	return "", fmt.Errorf("sandbox.caches.scope: %q is neither repository nor installation; write repository (the default) or installation", c.Scope)
}

// maxBytes is the cap of one cache; 0 for off.
func (c sandboxCaches) maxBytes() (int64, error) {
	switch strings.TrimSpace(c.MaxBytes) {
	case "":
		return defaultCacheMaxBytes, nil
	case "off":
		return 0, nil
	}
	return parseSize("sandbox.caches.max_bytes", c.MaxBytes)
}

// sandboxDisk is what runs must leave free on the data dir's filesystem
// (server/disk.go): unset, the defaults; 0, no reserve.
type sandboxDisk struct {
	ReserveBytes  *int64 `yaml:"reserve_bytes"`
	ReserveInodes *int64 `yaml:"reserve_inodes"`
}

// The defaults of sandbox.disk: room for the bot's own git work for other
// repositories (a fetch, a checkout, a run's first files) while a run that
// filled the disk is stopped.
const (
	defaultReserveBytes  = 1 << 30
	defaultReserveInodes = 100_000
)

func (d sandboxDisk) reserve() appserver.DiskReserve {
	r := appserver.DiskReserve{Bytes: defaultReserveBytes, Inodes: defaultReserveInodes}
	if d.ReserveBytes != nil {
		r.Bytes = *d.ReserveBytes
	}
	if d.ReserveInodes != nil {
		r.Inodes = *d.ReserveInodes
	}
	return r
}

type sandboxLimits struct {
	Processes int    `yaml:"processes"`
	Memory    string `yaml:"memory"`
	FileSize  string `yaml:"file_size"`
	CPUTime   string `yaml:"cpu_time"`
}

// sandboxConfig turns the policy into the sandbox's Config; hidden are the
// paths no node may see.
func (p sandboxPolicy) sandboxConfig(hidden []string, stateDir, pathEnv string) (sandbox.Config, error) {
	cfg := sandbox.Config{PATH: pathEnv, StateDir: stateDir, Hidden: hidden, ReadOnly: p.ReadOnly}
	for _, d := range p.ReadOnly {
		if !filepath.IsAbs(d) {
			return cfg, fmt.Errorf("sandbox.read_only: %q is not an absolute path", d)
		}
	}
	var err error
	if cfg.Network, err = sandbox.ParseNetwork(string(p.Network)); err != nil {
		return cfg, fmt.Errorf("sandbox.network: %w", err)
	}
	if cfg.NetworkAllow, err = sandbox.ParseCIDRs(p.NetworkAllow); err != nil {
		return cfg, fmt.Errorf("sandbox.network_allow: %w", err)
	}
	if len(cfg.NetworkAllow) > 0 && cfg.Network != sandbox.NetworkPublic {
		return cfg, fmt.Errorf("sandbox.network_allow is for network public; network is %s", cfg.Network)
	}
	if _, err := p.Caches.scope(); err != nil {
		return cfg, err
	}
	if _, err := p.Caches.maxBytes(); err != nil {
		return cfg, err
	}
	l := p.Limits
	if l.Processes < 0 {
		return cfg, fmt.Errorf("sandbox.limits.processes: %d is negative; write a positive number", l.Processes)
	}
	cfg.Limits.Processes = l.Processes
	if cfg.Limits.MemoryBytes, err = parseSize("sandbox.limits.memory", l.Memory); err != nil {
		return cfg, err
	}
	if cfg.Limits.FileSizeBytes, err = parseSize("sandbox.limits.file_size", l.FileSize); err != nil {
		return cfg, err
	}
	if l.CPUTime != "" {
		if cfg.Limits.CPUTime, err = attractor.ParseDuration(l.CPUTime); err != nil || cfg.Limits.CPUTime <= 0 {
			return cfg, fmt.Errorf("sandbox.limits.cpu_time: %q is not a duration such as 30m or 2h", l.CPUTime)
		}
	}
	return cfg, nil
}

var sizeRE = regexp.MustCompile(`^([0-9]+)\s*(B|KiB|MiB|GiB|TiB)?$`)

// parseSize reads a byte size such as 512MiB or 3GiB ("" is the default).
func parseSize(key, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	m := sizeRE.FindStringSubmatch(strings.TrimSpace(v))
	if m == nil {
		return 0, fmt.Errorf("%s: %q is not a size such as 512MiB or 3GiB", key, v)
	}
	n, err := strconv.ParseInt(m[1], 10, 64)
	shift := map[string]uint{"": 0, "B": 0, "KiB": 10, "MiB": 20, "GiB": 30, "TiB": 40}[m[2]]
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%s: %q is out of range", key, v)
	}
	return n << shift, nil
}

// newSandbox builds the node sandbox of serve and runs its self-test.
// With insecure set it returns nil (nodes run unjailed) and says so.
func newSandbox(ctx context.Context, c serveConfig, host map[string]string) (*sandbox.Sandbox, error) {
	if c.InsecureNoSandbox {
		return nil, nil
	}
	dataDir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return nil, err
	}
	cfg, err := c.Policy.Sandbox.sandboxConfig(append([]string{dataDir}, c.HiddenPaths...),
		filepath.Join(dataDir, "sandbox"), host["PATH"])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.ConfigFile, err)
	}
	s, err := sandbox.New(cfg)
	if err == nil {
		err = s.SelfTest(ctx)
	}
	if err == nil {
		for _, w := range agentEndpointWarnings(c.Policy.Agents, cfg.Network, cfg.NetworkAllow, cmp.Or(c.ConfigFile, "the server policy file")) {
			loggerFrom(ctx).WarnContext(ctx, "agents: "+w.String())
		}
	}
	if err == nil && !s.ProcessLimitHolds() {
		loggerFrom(ctx).WarnContext(ctx, "sandbox: the process limit does not hold: serve runs as root and may create no cgroup; "+
			"run it as a non-root user or give it a writable cgroup (docs/serve.md §11)")
	}
	if errors.Is(err, sandbox.ErrNetwork) {
		return nil, fmt.Errorf("%w\nsandbox.network is public (the default): every run gets a network namespace of its own, "+
			"reached only through pasta; install passt (scripts/install-sandbox.sh; as a user other than root, pasta "+
			"needs a /dev/net/tun that user may open, in a container --device /dev/net/tun), or set sandbox.network: none "+
			"(loopback only) or host (nodes share the host's network, insecure) in %s", err, c.ConfigFile)
	}
	if err != nil {
		return nil, fmt.Errorf("%w\nserve runs every pipeline node in a sandbox and will not start without one; "+
			"fix the above, or pass --insecure-no-sandbox (KILROY_INSECURE_NO_SANDBOX=1) to run nodes with the bot's own "+
			"rights (every check summary will say so)", err)
	}
	return s, nil
}

// insecureBanner is the first line of every check summary when nodes run
// without the sandbox, in the host's network, or when serve runs as root
// (--allow-root).
func insecureBanner(c serveConfig) string {
	var lines []string
	if c.InsecureNoSandbox {
		lines = append(lines, "**This server runs pipeline nodes without a sandbox** (`--insecure-no-sandbox`): "+
			"their code has the bot's own rights on its machine.")
	} else if l := hostNetworkBanner(c); l != "" {
		lines = append(lines, l)
	}
	if c.Root && c.AllowRoot {
		lines = append(lines, "**This server runs as root** (`--allow-root`): a node that gets out of its sandbox "+
			"has root on the bot's machine.")
	}
	if len(lines) == 0 {
		return ""
	}
	return "> [!WARNING]\n> " + strings.Join(lines, "\n>\n> ")
}
