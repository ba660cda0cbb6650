package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kilroy-bot/kilroy-bot/policy"
	"github.com/kilroy-bot/kilroy-bot/runner/image"
	"github.com/kilroy-bot/kilroy-bot/runner/sandbox"
)

// Images is the image store a run's root filesystem comes from
// (runner/image.Store).
type Images interface {
	Resolve(ctx context.Context, ref string) (image.Ref, error)
	Ensure(ctx context.Context, ref image.Ref) (*image.Image, error)
}

// ImageOptions say which image a run's nodes run in (DESIGN §5): the
// pipeline's `image:`, else the repository's, else Default; "host" is the
// host jail (the bot's own /usr and toolchains).
type ImageOptions struct {
	// Store pulls and unpacks images; nil when none is configured, and
	// then only the host jail can run.
	Store Images
	// Override wins over the repository's choice (`kilroy-bot run
	// --image`); it may also be a local source (oci:DIR, ...).
	Override string
	// Default serves a repository that names no image; "" is "host".
	Default string
	// Restrict makes a repository's choice pass Allow (the server's
	// images.allow); a local run takes any.
	Restrict bool
	Allow    []string
}

// RunImage is the image a run's nodes run in, pinned to a digest when the
// run started: checkpoint.json keeps it, so a resume uses the same image
// whatever the tag says by then.
type RunImage struct {
	// Ref is the reference as chosen ("golang:1.23", "oci-archive:/x.tar").
	Ref    string    `json:"ref"`
	Pinned image.Ref `json:"pinned"`
}

// Choose returns the image pipeline name of cfg runs in ("host" for the
// host jail). A choice the server does not allow is an ErrUsage error
// placed at its `image:` line, naming the allowed patterns.
func (o ImageOptions) Choose(cfg *policy.RepoConfig, name string) (string, error) {
	if o.Override != "" {
		return o.Override, nil
	}
	c := cfg.ImageFor(name)
	if c.IsZero() {
		if o.Default == "" {
			return policy.ImageHost, nil
		}
		return o.Default, nil
	}
	if !o.Restrict || c.Ref == o.Default || image.Allowed(c.Ref, o.Allow) ||
		c.Ref == policy.ImageHost && contains(o.Allow, policy.ImageHost) {
		return c.Ref, nil
	}
	allowed := "none: this server runs only its default image (images.default)"
	if len(o.Allow) > 0 {
		allowed = "`" + strings.Join(o.Allow, "`, `") + "`"
	}
	full := c.Ref
	if n, err := image.Normalize(c.Ref); err == nil && n != c.Ref && c.Ref != policy.ImageHost {
		full += " (" + n + ")"
	}
	return "", fmt.Errorf("%w: %w", ErrUsage, c.Errorf(
		"%s is not allowed on this server; images.allow: %s. Use an allowed image, or drop the key to run in the server's default", full, allowed))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// ImagePin is a new run's image choice being resolved to a digest while
// the run is assembled, so that the registry's round trips (the version
// check, the tag's manifest) overlap the checkout instead of following
// it. The tag is resolved afresh for every run all the same.
type ImagePin struct {
	ref    string // "" for the host jail, or when Choose refused
	done   chan struct{}
	cancel context.CancelFunc
	pinned image.Ref
	err    error
}

// StartPin chooses the image sel's pipeline runs in (o.Choose) and starts
// resolving it to a digest on a goroutine of its own. Hand the pin to
// Prepared.PinImage once the run is assembled, or Stop it.
func (o ImageOptions) StartPin(ctx context.Context, sel *Selection) *ImagePin {
	pin := &ImagePin{done: make(chan struct{})}
	cfg := sel.Config
	if cfg == nil {
		cfg = &policy.RepoConfig{}
	}
	ref, err := o.Choose(cfg, sel.Name)
	switch {
	case err == nil && ref != policy.ImageHost && o.Store == nil:
		err = fmt.Errorf("%w: image %s: no image store here", ErrUsage, ref)
	case err == nil && ref != policy.ImageHost:
		pin.ref = ref
		ctx, pin.cancel = context.WithCancel(ctx)
		go func() {
			defer close(pin.done)
			pin.pinned, pin.err = o.Store.Resolve(ctx, ref)
		}()
		return pin
	}
	pin.err = err
	close(pin.done)
	return pin
}

// PinImage waits for the run's image to be resolved (StartPin) and pins
// its digest, which checkpoint.json keeps; a resumed run keeps the one it
// started with. A choice the server does not allow, or a reference that
// does not parse, is an ErrUsage error. Call it before Execute.
func (p *Prepared) PinImage(pin *ImagePin) error {
	if p.resumeFrom != nil || p.cp.Image != nil {
		pin.Stop()
		return nil
	}
	im, err := pin.wait()
	if err != nil {
		return err
	}
	p.cp.Image = im
	return nil
}

// wait is the pinned image once resolved: nil for the host jail.
func (pin *ImagePin) wait() (*RunImage, error) {
	<-pin.done
	if pin.cancel != nil {
		pin.cancel()
	}
	switch {
	case pin.err != nil && pin.ref == "":
		return nil, pin.err
	case errors.Is(pin.err, image.ErrBadReference):
		return nil, fmt.Errorf("%w: image %s: %w", ErrUsage, pin.ref, pin.err)
	case pin.err != nil:
		return nil, fmt.Errorf("image %s: %w", pin.ref, pin.err)
	case pin.ref == "":
		return nil, nil
	}
	return &RunImage{Ref: pin.ref, Pinned: pin.pinned}, nil
}

// Stop abandons the resolve of a run that will not start, and waits for
// its goroutine to end.
func (pin *ImagePin) Stop() {
	if pin.cancel != nil {
		pin.cancel()
	}
	<-pin.done
}

// Abandon undoes Assemble for a run that will not execute: its worktree
// and the run branch it made go.
func (p *Prepared) Abandon(ctx context.Context) { p.release(ctx, true) }

// Image is the run's pinned image; nil when it runs in the host jail.
func (p *Prepared) Image() *RunImage { return p.cp.Image }

// imageEnv is env with the sandbox of the run's image, and what to call
// when the run is done with it.
func (p *Prepared) imageEnv(ctx context.Context, o LocalOptions) (EnvInputs, func(), error) {
	env, im := o.Env, p.cp.Image
	if im == nil {
		return env, func() {}, nil
	}
	switch {
	case o.Images.Store == nil:
		return env, nil, fmt.Errorf("image %s: no image store here", im.Ref)
	case env.Sandbox == nil:
		return env, nil, fmt.Errorf("%w: image %s: nodes run in an image only in the sandbox (bubblewrap), which is off here; "+
			"run with --image host, or where bubblewrap works", ErrUsage, im.Ref)
	}
	img, err := o.Images.Store.Ensure(ctx, im.Pinned)
	if err != nil {
		return env, nil, fmt.Errorf("image %s @ %s: %w", im.Ref, im.Pinned.Digest, err)
	}
	env.Sandbox = env.Sandbox.WithImage(sandbox.Image{Root: img.Root, Env: img.Env, Name: im.Ref})
	return env, func() { img.Release() }, nil
}
