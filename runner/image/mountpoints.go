package image

import "github.com/kilroy-bot/kilroy-bot/runner/sandbox"

// addMountPoints gives the unpacked tree at root, before it is published,
// the mount points the jail needs in it (sandbox.AddMountPoints): only
// what the image lacks, never through a link, nothing it holds changed.
// A jail then binds the tree at "/" whole, with no directory split into
// one bind per entry. cfg records what was added. Trees unpacked before
// have none; the jail splits around what they lack, as it always did.
func addMountPoints(root string, cfg *Config) error {
	added, err := sandbox.AddMountPoints(root)
	cfg.MountPoints = added
	return err
}
