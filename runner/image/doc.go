// Package image is the store of OCI images that runs use as their root
// filesystem: it resolves references, pulls, verifies, unpacks, caches and
// sweeps them, on go-containerregistry. It starts no process.
//
// A reference becomes a Ref pinned to a digest once (Resolve); a run keeps
// that Ref so that a resume uses the same image whatever the tag says by
// then. Ensure turns a Ref into an unpacked tree, Image.Root, which the
// jail binds read-only at "/". Trees are keyed by digest and shared by every
// run; the first Ensure of a digest pulls it, the next ones, in any process
// sharing the directory, only read image.json.
//
// Verification is a chain from the pinned digest: the manifest hashes to
// it, the config to the manifest's config digest, each layer's
// uncompressed stream to the config's diff ID (go-containerregistry also
// checks each compressed blob against the manifest as it downloads). A
// docker archive has no manifest: its digest is the config's (the image
// ID).
//
// Unpacking refuses what could write outside the tree, or through a link
// anywhere: absolute paths, "..", an entry below a symbolic link, a hard
// link to a path that is not in the tree. It drops device nodes, fifos and
// sockets, clears setuid and setgid bits, ignores owners and extended
// attributes, honours whiteouts and opaque directories, and stops as soon
// as Options.MaxBytes have been read uncompressed. A failed or interrupted
// pull leaves only a temporary directory, never an image.
//
// References: Normalize spells them in full ("golang:1.23" is
// "docker.io/library/golang:1.23"), Allowed matches them against the
// server's images.allow patterns. Local sources, for kilroy-bot run --image,
// are "oci:DIR" (an OCI layout), "oci-archive:FILE" (a tar of one) and
// "docker-archive:FILE" (docker save).
package image
