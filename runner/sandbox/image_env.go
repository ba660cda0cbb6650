package sandbox

import (
	"maps"
	"strings"
)

// imageEnv fills env for a node in an image: the image's Env, the run's
// cache variables over it (CacheEnv of spec.Caches, the repository's cache
// directory, which the jail shows at CachePath and Run rewrites them to),
// then the artifact policy's variables, and HOME, the jail's private home.
// Nothing of the host: PATH and the toolchain are the image's, and no
// cache of the host's is shown.
func imageEnv(env map[string]string, spec EnvSpec) {
	for _, kv := range spec.Image {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	maps.Copy(env, CacheEnv(spec.Caches))
	maps.Copy(env, spec.Policy)
	env["HOME"] = HomePath
}
