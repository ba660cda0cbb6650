package image

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"golang.org/x/sys/unix"
)

// Ensure makes the pinned image available, unpacked, and leases it: Sweep
// leaves it alone until Release. A digest already unpacked costs no
// request; otherwise exactly one goroutine of one process (of all those
// sharing the directory) pulls, verifies and unpacks it, and the others
// wait for its result.
func (s *Store) Ensure(ctx context.Context, ref Ref) (*Image, error) {
	hex, err := digestHex(ref.Digest)
	if err != nil {
		return nil, err
	}
	lease, err := s.flock(ctx, hex+".use", unix.LOCK_SH)
	if err != nil {
		return nil, err
	}
	img, err := s.ensure(ctx, ref, hex)
	if err != nil {
		lease.Close()
		return nil, err
	}
	img.Ref = ref
	img.lease = lease
	img.touch = func() { s.touch(hex) }
	img.touch()
	return img, nil
}

func (s *Store) ensure(ctx context.Context, ref Ref, hex string) (*Image, error) {
	if img, err := s.load(hex); !errors.Is(err, fs.ErrNotExist) {
		return img, err
	}
	unlock, err := s.lockPull(ctx, hex)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if img, err := s.load(hex); !errors.Is(err, fs.ErrNotExist) {
		return img, err
	}
	if err := s.pull(ctx, ref, hex); err != nil {
		return nil, fmt.Errorf("image %s: %w", ref, err)
	}
	return s.load(hex)
}

// touch records a use, which Sweep's age counts from.
func (s *Store) touch(hex string) {
	now := time.Now()
	os.Chtimes(s.path(hex), now, now)
}

// pull unpacks the image into a temporary directory and renames it into
// place once complete and on disk.
func (s *Store) pull(ctx context.Context, ref Ref, hex string) error {
	src, err := s.source(ctx, ref)
	if err != nil {
		return err
	}
	defer src.cleanup()
	dir, lock, err := s.tempDir(hex + ".")
	if err != nil {
		return err
	}
	defer lock.Close()
	defer removeTree(dir)
	cfg, err := s.unpack(ctx, src, ref, filepath.Join(dir, rootfsDir))
	if err == nil {
		err = addMountPoints(filepath.Join(dir, rootfsDir), &cfg)
	}
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, metaFile), b, 0o644)
	}
	if err == nil {
		err = unix.Syncfs(int(lock.Fd()))
	}
	if err == nil {
		err = s.place(dir, hex)
	}
	return err
}

// place renames a complete image into place. A directory already there
// without image.json (not one of ours: half deleted by hand, say) goes
// first; the pull lock keeps everyone else out meanwhile.
func (s *Store) place(dir, hex string) error {
	err := os.Rename(dir, s.path(hex))
	if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
		return err
	}
	trash, lock, err := s.tempDir("broken.")
	if err != nil {
		return err
	}
	defer lock.Close()
	defer removeTree(trash)
	if err := os.Rename(s.path(hex), filepath.Join(trash, hex)); err != nil {
		return err
	}
	return os.Rename(dir, s.path(hex))
}

// unpack checks the chain of digests from the Ref to every layer (the
// manifest, the config it names, the layers' diff IDs the config lists;
// go-containerregistry checks the compressed blobs as they download) and
// unpacks the layers in order into dir.
func (s *Store) unpack(ctx context.Context, src *source, ref Ref, dir string) (Config, error) {
	cf, err := s.config(src, ref)
	if err != nil {
		return Config{}, err
	}
	layers, err := src.img.Layers()
	if err != nil {
		return Config{}, err
	}
	diffIDs := cf.RootFS.DiffIDs
	if len(layers) != len(diffIDs) {
		return Config{}, fmt.Errorf("%w: %d layers, the config lists %d", ErrDigest, len(layers), len(diffIDs))
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return Config{}, err
	}
	u, err := newUnpacker(dir, s.opts.MaxBytes)
	if err != nil {
		return Config{}, err
	}
	defer u.close()
	for i, l := range layers {
		if err := u.apply(ctx, l, diffIDs[i]); err != nil {
			return Config{}, fmt.Errorf("layer %d of %d (%s): %w", i+1, len(layers), diffIDs[i], err)
		}
	}
	if err := u.finish(); err != nil {
		return Config{}, err
	}
	p := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
	return Config{
		Ref: ref, Platform: p.String(),
		Env: cf.Config.Env, WorkingDir: cf.Config.WorkingDir, User: cf.Config.User,
		Bytes: u.streamed, Dropped: u.dropped, Cleared: u.cleared, Pulled: time.Now().UTC(),
	}, nil
}

// config reads the image's config, checked against the digests that name
// it, its platform, and the manifest's claims about the layers.
func (s *Store) config(src *source, ref Ref) (*v1.ConfigFile, error) {
	raw, err := src.img.RawConfigFile()
	if err != nil {
		return nil, fmt.Errorf("config: %w", digestError(err))
	}
	want := ref.Digest
	if !src.configPinned {
		m, err := s.manifest(src.img, ref)
		if err != nil {
			return nil, err
		}
		want = m.Config.Digest.String()
	}
	if got := sha256Digest(raw); got != want {
		return nil, fmt.Errorf("%w: config is %s, want %s", ErrDigest, got, want)
	}
	cf, err := v1.ParseConfigFile(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	p := v1.Platform{OS: cf.OS, Architecture: cf.Architecture, Variant: cf.Variant}
	if !p.Satisfies(s.platform) {
		return nil, fmt.Errorf("%w: want %s, the image is %s", ErrPlatform, s.platform.String(), p.String())
	}
	return cf, nil
}

// manifest reads the image's manifest, checked against the Ref's digest;
// it refuses an image bigger compressed than MaxBytes before any layer is
// fetched, and layers to be fetched from elsewhere than the registry.
func (s *Store) manifest(img v1.Image, ref Ref) (*v1.Manifest, error) {
	raw, err := img.RawManifest()
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if got := sha256Digest(raw); got != ref.Digest {
		return nil, fmt.Errorf("%w: manifest is %s, want %s", ErrDigest, got, ref.Digest)
	}
	m, err := v1.ParseManifest(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	var total int64
	for _, l := range m.Layers {
		if len(l.URLs) > 0 {
			return nil, fmt.Errorf("layer %s: foreign layers (fetched from URLs) are not supported", l.Digest)
		}
		total += l.Size
	}
	if total > s.opts.MaxBytes {
		return nil, fmt.Errorf("%w: layers are %d bytes compressed, the limit is %d", ErrTooLarge, total, s.opts.MaxBytes)
	}
	return m, nil
}

// apply unpacks one layer, hashing its uncompressed stream for the diff ID.
func (u *unpacker) apply(ctx context.Context, l v1.Layer, diffID v1.Hash) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return digestError(err)
	}
	defer rc.Close()
	// Hashed as unpacked, not as read ahead: the read-ahead goroutine's
	// decompressing is what a pull waits for.
	h := sha256.New()
	ra := newReadahead(rc)
	err = u.layer(ctx, io.TeeReader(ra, h))
	ra.Close()
	if err != nil {
		return digestError(err)
	}
	if got := fmt.Sprintf("sha256:%x", h.Sum(nil)); got != diffID.String() {
		return fmt.Errorf("%w: uncompressed layer is %s", ErrDigest, got)
	}
	return nil
}

func sha256Digest(b []byte) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256(b))
}

// digestError marks go-containerregistry's checks of a blob as it reads
// (a type of an internal package, known by its message) as ErrDigest.
func digestError(err error) error {
	msg := err.Error()
	for _, m := range []string{"error verifying sha256 checksum", "error verifying size", "does not match expected size"} {
		if strings.Contains(msg, m) {
			return fmt.Errorf("%w: %v", ErrDigest, err)
		}
	}
	return err
}
