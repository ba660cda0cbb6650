package image

import "errors"

// Errors callers branch on with errors.Is. The wrapping error names the
// image, the layer and the entry.
var (
	// ErrBadReference: the reference does not parse.
	ErrBadReference = errors.New("not a valid image reference")
	// ErrPlatform: the image has nothing for the store's platform.
	ErrPlatform = errors.New("no image for this platform")
	// ErrUnsafe: a layer tries to write outside the image's root or through
	// a link; the image is refused.
	ErrUnsafe = errors.New("unsafe layer entry")
	// ErrTooLarge: the image is bigger than Options.MaxBytes.
	ErrTooLarge = errors.New("image too large")
	// ErrDigest: a blob does not have the digest that names it.
	ErrDigest = errors.New("digest mismatch")
	// ErrInsecure: plain HTTP to a registry not listed in Options.Insecure.
	ErrInsecure = errors.New("plain HTTP not allowed for this registry")
)
