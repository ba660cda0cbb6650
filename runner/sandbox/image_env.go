package sandbox

import (
	"maps"
	"path/filepath"
	"strings"
)

// imageEnv fills env for a node in an image: the image's Env, the caches
// the jail binds (NodeJail: the bot's, at the same paths inside the jail)
// over it, then the artifact policy's variables, and HOME, the jail's
// private home. Nothing else of the host: PATH and the toolchain are the
// image's.
func imageEnv(env map[string]string, spec EnvSpec, host map[string]string) {
	for _, kv := range spec.Image {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	trusted := NodeEnv(EnvSpec{Host: host})
	for _, v := range cacheVars {
		if d, ok := Lookup(trusted, v); ok && filepath.IsAbs(d) {
			env[v] = d
		}
	}
	maps.Copy(env, spec.Policy)
	env["HOME"] = ImageHome
}
