package policy

import (
	"cmp"
	"path/filepath"
	"strings"
)

const (
	mavenOptsVar  = "MAVEN_OPTS"
	mavenRepoFlag = "-Dmaven.repo.local="
)

// envResolver computes the environment of the active profiles.
type envResolver struct {
	policy    EnvPolicy
	host      map[string]string
	caches    map[string]string // variable -> the repository's cache directory
	mavenRepo string
	runDir    string
	roots     map[string]string // active profile -> absolute managed root
}

// resolveEnv returns the profile environment and the managed roots in use.
func resolveEnv(profiles []string, p EnvPolicy, runDir string, in ResolveInput) (map[string]string, map[string]string) {
	r := envResolver{policy: p, host: in.HostEnv, caches: in.Caches, mavenRepo: in.MavenRepo, runDir: runDir,
		roots: map[string]string{}}
	for _, prof := range profiles {
		if dir, ok := p.ManagedRoots[prof]; ok {
			r.roots[prof] = r.absRoot(dir)
		}
	}
	env := map[string]string{}
	for _, prof := range profiles {
		r.profileEnv(prof, env)
	}
	return env, r.roots
}

// absRoot places a relative managed root under the run directory.
func (r envResolver) absRoot(dir string) string {
	if filepath.IsAbs(dir) {
		return filepath.Clean(dir)
	}
	return filepath.Join(r.runDir, ManagedRootsDir, dir)
}

func (r envResolver) profileEnv(prof string, env map[string]string) {
	d := defaults{home: r.host["HOME"], runDir: r.runDir, env: env}
	for _, v := range profileVars(prof) {
		if val := r.pick(prof, v, d); val != "" {
			env[v.name] = val
		}
	}
	if prof == ProfileJava {
		if val := r.mavenOpts(d); val != "" {
			env[mavenOptsVar] = val
		}
	}
	for name, val := range r.policy.Overrides[prof] {
		if varOwner(name) == "" {
			env[name] = cmp.Or(r.hostValue(name), val)
		}
	}
}

// hostValue is the host's value of name, unless name is a cache variable:
// the host's caches are never a run's.
func (r envResolver) hostValue(name string) string {
	if _, cached := r.caches[name]; cached {
		return ""
	}
	return r.host[name]
}

// pick applies the precedence: host environment, override, managed root,
// the repository's cache, built-in default. GOMODCACHE follows a GOPATH
// the repository chose, as Go's own default does.
func (r envResolver) pick(prof string, v profileVar, d defaults) string {
	if val := r.hostValue(v.name); val != "" {
		return val
	}
	if val := r.policy.Overrides[prof][v.name]; val != "" {
		return val
	}
	if root, ok := r.roots[prof]; ok && v.managedSub != "" {
		return filepath.Join(root, v.managedSub)
	}
	if c, ok := r.caches[v.name]; ok && (v.name != "GOMODCACHE" || d.env["GOPATH"] == r.caches["GOPATH"]) {
		return c
	}
	return v.builtin(d)
}

// mavenOpts keeps MAVEN_OPTS (host, else override) and appends the local
// repository flag only when no such flag is there yet.
func (r envResolver) mavenOpts(d defaults) string {
	opts := cmp.Or(r.host[mavenOptsVar], r.policy.Overrides[ProfileJava][mavenOptsVar])
	if strings.Contains(opts, mavenRepoFlag) {
		return opts
	}
	repo := filepath.Join(d.home, ".m2", "repository")
	if root, ok := r.roots[ProfileJava]; ok {
		repo = filepath.Join(root, "m2")
	} else if r.mavenRepo != "" {
		repo = r.mavenRepo
	} else if d.home == "" {
		return opts
	}
	return strings.TrimSpace(opts + " " + mavenRepoFlag + repo)
}
