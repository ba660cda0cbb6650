package image

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// Resolve pins a reference to the digest of its image for the store's
// platform: for a registry, one manifest request (a manifest list picks
// the platform's entry); for a local source, its index or archive. The
// image itself is not fetched.
func (s *Store) Resolve(ctx context.Context, ref string) (Ref, error) {
	if Local(ref) {
		return s.resolveLocal(ctx, ref)
	}
	full, err := Normalize(ref)
	if err != nil {
		return Ref{}, err
	}
	r, err := s.parse(full)
	if err != nil {
		return Ref{}, err
	}
	opts, err := s.remoteOptions(ctx)
	if err != nil {
		return Ref{}, err
	}
	desc, err := remote.Get(r, opts...)
	if err != nil {
		return Ref{}, fmt.Errorf("image %s: %w", full, err)
	}
	switch {
	case desc.MediaType.IsImage():
		return Ref{Name: full, Digest: desc.Digest.String()}, nil
	case desc.MediaType.IsIndex():
		idx, err := desc.ImageIndex()
		if err != nil {
			return Ref{}, fmt.Errorf("image %s: %w", full, err)
		}
		h, err := pickImage(idx, s.platform)
		if err != nil {
			return Ref{}, fmt.Errorf("image %s: %w", full, err)
		}
		return Ref{Name: full, Digest: h.String()}, nil
	}
	return Ref{}, fmt.Errorf("image %s: manifest of type %q is not an image", full, desc.MediaType)
}

// parse reads a normalised reference, marking the registries allowed
// plain HTTP.
func (s *Store) parse(full string) (name.Reference, error) {
	if _, err := Normalize(full); err != nil {
		return nil, err
	}
	r, err := name.ParseReference(full)
	if err != nil {
		return nil, fmt.Errorf("image %q: %w: %v", full, ErrBadReference, err)
	}
	if s.insecure[r.Context().RegistryStr()] {
		return name.ParseReference(full, name.Insecure)
	}
	return r, nil
}

// remoteOptions: the credentials of the auth file as it is now, and the
// HTTP guard.
func (s *Store) remoteOptions(ctx context.Context) ([]remote.Option, error) {
	kc, err := loadKeychain(s.opts.AuthFile)
	if err != nil {
		return nil, err
	}
	return []remote.Option{
		remote.WithContext(ctx),
		remote.WithAuthFromKeychain(kc),
		remote.WithTransport(httpGuard{next: s.opts.Transport, insecure: s.insecure}),
		remote.WithPlatform(s.platform),
		remote.WithUserAgent("kilroy-bot"),
	}, nil
}

// pickImage finds the image for the platform in an index, nested indexes
// included. An index holding a single image without a platform (as podman
// save writes) gives that image; Ensure checks its config.
func pickImage(idx v1.ImageIndex, want v1.Platform) (v1.Hash, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return v1.Hash{}, err
	}
	var others []string
	var unlabeled []v1.Hash
	for _, d := range im.Manifests {
		switch {
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return v1.Hash{}, err
			}
			h, err := pickImage(child, want)
			if err == nil || !errors.Is(err, ErrPlatform) {
				return h, err
			}
		case !d.MediaType.IsImage():
		case d.Platform == nil:
			unlabeled = append(unlabeled, d.Digest)
		case d.Platform.Satisfies(want):
			return d.Digest, nil
		case d.Platform.OS != "unknown": // attestations are listed as unknown/unknown
			others = append(others, d.Platform.String())
		}
	}
	if len(unlabeled) == 1 && len(others) == 0 {
		return unlabeled[0], nil
	}
	if len(unlabeled) > 1 {
		return v1.Hash{}, fmt.Errorf("the index holds %d images without a platform; keep one", len(unlabeled))
	}
	if len(others) == 0 {
		others = []string{"none"}
	}
	return v1.Hash{}, fmt.Errorf("%w: want %s, the index has %s", ErrPlatform, want.String(), strings.Join(others, ", "))
}

// findImage finds the image with digest h in an index, nested indexes
// included.
func findImage(idx v1.ImageIndex, h v1.Hash) (v1.Image, error) {
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		switch {
		case d.Digest == h && d.MediaType.IsImage():
			return idx.Image(h)
		case d.MediaType.IsIndex():
			child, err := idx.ImageIndex(d.Digest)
			if err != nil {
				return nil, err
			}
			if img, err := findImage(child, h); err == nil {
				return img, nil
			}
		}
	}
	return nil, fmt.Errorf("no image %s in the index", h)
}

func (s *Store) resolveLocal(ctx context.Context, ref string) (Ref, error) {
	prefix, path, err := localName(ref)
	if err != nil {
		return Ref{}, err
	}
	out := Ref{Name: prefix + path}
	var h v1.Hash
	switch prefix {
	case SourceDockerArchive:
		var img v1.Image
		if img, err = tarball.ImageFromPath(path, nil); err == nil {
			h, err = img.ConfigName()
		}
	case SourceOCI:
		var idx v1.ImageIndex
		if idx, err = layout.ImageIndexFromPath(path); err == nil {
			h, err = pickImage(idx, s.platform)
		}
	case SourceOCIArchive:
		err = s.withArchive(ctx, path, func(dir string) error {
			idx, err := layout.ImageIndexFromPath(dir)
			if err == nil {
				h, err = pickImage(idx, s.platform)
			}
			return err
		})
	}
	if err != nil {
		return Ref{}, fmt.Errorf("image %s: %w", out.Name, err)
	}
	out.Digest = h.String()
	return out, nil
}
