package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
)

// ResolvedVersion is the format version of Resolved; it is part of the hash
// so a snapshot from an older format never passes for a current one.
const ResolvedVersion = 1

// ResolveInput is everything Resolve looks at.
type ResolveInput struct {
	Policy ArtifactPolicy
	// Repo is the run's worktree, read only for marker detection (mode auto).
	Repo fs.FS
	// RunDir is the absolute run directory; relative managed roots and the
	// default CARGO_TARGET_DIR live under RunDir/policy-managed-roots.
	RunDir string
	// HostEnv is the host environment; HOME and the profile variables are
	// read from it.
	HostEnv map[string]string
	// Caches are the repository's cache directories by variable (GOPATH,
	// GOMODCACHE, CARGO_HOME, npm_config_cache, ...), never the host's.
	// A variable they name takes no value from HostEnv or a built-in
	// default under HOME: it points at its cache unless the repository
	// chose a directory of its run (env.overrides, env.managed_roots).
	Caches map[string]string
	// MavenRepo is the repository's local Maven repository among its
	// caches (-Dmaven.repo.local); "" keeps ~/.m2/repository.
	MavenRepo string
}

// Resolved is the artifact policy of one run, resolved once at its start
// and snapshotted in checkpoint.json. It is plain data: encode it with
// encoding/json and compare Hash values.
type Resolved struct {
	Version int    `json:"version"`
	Mode    string `json:"mode"`
	// Profiles are the active profiles in lexical order.
	Profiles []string `json:"profiles,omitempty"`
	// Markers maps each auto-detected profile to the first marker file seen.
	Markers map[string]string `json:"markers,omitempty"`
	// Env is the profile environment every node gets.
	Env map[string]string `json:"env,omitempty"`
	// ManagedRoots maps each active profile with a managed root to its
	// absolute directory.
	ManagedRoots map[string]string `json:"managed_roots,omitempty"`
	Checkpoint   CheckpointPolicy  `json:"checkpoint"`
	Verify       VerifyPolicy      `json:"verify"`
}

// Resolve validates the policy, applies its defaults, chooses the profiles
// and computes their environment. A bad policy yields ConfigErrors naming
// each offending key under artifact_policy.
func Resolve(in ResolveInput) (*Resolved, error) {
	p := in.Policy.WithDefaults()
	if errs := validatePolicy(p, keyPath{"artifact_policy"}); len(errs) > 0 {
		return nil, fmt.Errorf("resolve artifact policy: %w", placeless(errs))
	}
	if !filepath.IsAbs(in.RunDir) {
		return nil, fmt.Errorf("resolve artifact policy: run directory %q is not absolute", in.RunDir)
	}
	r := &Resolved{
		Version:    ResolvedVersion,
		Mode:       p.Profiles.Mode,
		Checkpoint: CheckpointPolicy{ExcludeGlobs: slices.Clone(p.Checkpoint.ExcludeGlobs)},
		Verify: VerifyPolicy{
			DenyGlobs:  slices.Clone(p.Verify.DenyGlobs),
			AllowGlobs: slices.Clone(p.Verify.AllowGlobs),
		},
	}
	profiles, markers, err := chooseProfiles(p.Profiles, in.Repo)
	if err != nil {
		return nil, fmt.Errorf("resolve artifact policy: %w", err)
	}
	r.Profiles, r.Markers = profiles, markers
	env, roots := resolveEnv(profiles, p.Env, filepath.Clean(in.RunDir), in)
	r.Env, r.ManagedRoots = nilIfEmpty(env), nilIfEmpty(roots)
	return r, nil
}

// nilIfEmpty keeps Resolved in the form a JSON round trip produces.
func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

// chooseProfiles applies profiles.mode.
func chooseProfiles(p ProfilesPolicy, repo fs.FS) ([]string, map[string]string, error) {
	switch p.Mode {
	case ModeDisabled:
		return nil, nil, nil
	case ModeExplicit:
		profiles := slices.Clone(p.Explicit)
		slices.Sort(profiles)
		return slices.Compact(profiles), nil, nil
	}
	if repo == nil {
		return nil, nil, errors.New("profiles.mode auto needs the repository to scan for markers")
	}
	return detectProfiles(repo)
}

// placeless turns field errors without a file into ConfigErrors.
func placeless(errs []fieldError) ConfigErrors {
	out := make(ConfigErrors, len(errs))
	for i, e := range errs {
		out[i] = &ConfigError{Key: e.path.String(), Msg: e.msg}
	}
	return out
}
