package policy

// Profile modes of artifact_policy.profiles.mode.
const (
	ModeAuto     = "auto"
	ModeExplicit = "explicit"
	ModeDisabled = "disabled"
)

// Profiles. Generic is what auto detection yields when no marker is found;
// it owns no environment variables.
const (
	ProfileRust    = "rust"
	ProfileGo      = "go"
	ProfileNode    = "node"
	ProfilePython  = "python"
	ProfileJava    = "java"
	ProfileGeneric = "generic"
)

// ManagedRootsDir is the directory under the run directory that holds the
// relative managed roots and the default CARGO_TARGET_DIR.
const ManagedRootsDir = "policy-managed-roots"

// ArtifactPolicy is the `artifact_policy` block of `.kilroy/config.yml`.
type ArtifactPolicy struct {
	Profiles   ProfilesPolicy   `yaml:"profiles" json:"profiles"`
	Env        EnvPolicy        `yaml:"env" json:"env"`
	Checkpoint CheckpointPolicy `yaml:"checkpoint" json:"checkpoint"`
	Verify     VerifyPolicy     `yaml:"verify" json:"verify"`
}

// ProfilesPolicy chooses the toolchain profiles of a run.
type ProfilesPolicy struct {
	Mode     string   `yaml:"mode" json:"mode,omitempty"` // auto (default), explicit or disabled
	Explicit []string `yaml:"explicit" json:"explicit,omitempty"`
}

// EnvPolicy adjusts the environment the profiles set.
type EnvPolicy struct {
	// Overrides maps a profile to variable values that replace its defaults
	// (the host environment still wins).
	Overrides map[string]map[string]string `yaml:"overrides" json:"overrides,omitempty"`
	// ManagedRoots maps a toolchain profile to the directory that holds its
	// caches and build output.
	ManagedRoots map[string]string `yaml:"managed_roots" json:"managed_roots,omitempty"`
}

// CheckpointPolicy lists the paths checkpoint commits leave out. Empty
// means DefaultExcludeGlobs.
type CheckpointPolicy struct {
	ExcludeGlobs []string `yaml:"exclude_globs" json:"exclude_globs,omitempty"`
}

// VerifyPolicy lists the paths verify.artifacts refuses (DenyGlobs; empty
// means the checkpoint excludes) and the carve-outs from them (AllowGlobs).
type VerifyPolicy struct {
	DenyGlobs  []string `yaml:"deny_globs" json:"deny_globs,omitempty"`
	AllowGlobs []string `yaml:"allow_globs" json:"allow_globs,omitempty"`
}

// DefaultExcludeGlobs returns the default checkpoint excludes: build and
// dependency directories no one commits on purpose. Broad names that are
// often source (target, dist, build) are deliberately absent.
func DefaultExcludeGlobs() []string {
	return []string{
		"**/.cargo-target*/**",
		"**/.cargo_target*/**",
		"**/.wasm-pack/**",
		"**/.tmpbuild/**",
		"**/node_modules/**",
		"**/__pycache__/**",
		"**/.venv/**",
	}
}

// WithDefaults returns a copy of p with every default filled in: mode auto,
// the default checkpoint excludes and deny globs equal to the excludes.
// Applying it twice changes nothing.
func (p ArtifactPolicy) WithDefaults() ArtifactPolicy {
	if p.Profiles.Mode == "" {
		p.Profiles.Mode = ModeAuto
	}
	if len(p.Checkpoint.ExcludeGlobs) == 0 {
		p.Checkpoint.ExcludeGlobs = DefaultExcludeGlobs()
	}
	if len(p.Verify.DenyGlobs) == 0 {
		p.Verify.DenyGlobs = append([]string(nil), p.Checkpoint.ExcludeGlobs...)
	}
	return p
}
