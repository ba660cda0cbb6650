package image

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"golang.org/x/sys/unix"
)

// DefaultMaxBytes caps an image's uncompressed size when Options.MaxBytes
// is zero.
const DefaultMaxBytes int64 = 8 << 30

// Options configure a Store; the zero value pulls anonymously, over HTTPS
// (plain HTTP to loopback only), for this host's platform.
type Options struct {
	// AuthFile is a docker config.json with registry credentials ("auths");
	// read at every pull, so a rotated file needs no restart. Credential
	// helpers are refused: this package starts no process.
	AuthFile string
	// Insecure lists registries (host[:port]) that may be reached over
	// plain HTTP. Loopback registries always may.
	Insecure []string
	// MaxBytes caps the uncompressed size of an image (every layer's tar
	// stream, and every file's content as written); DefaultMaxBytes if 0.
	MaxBytes int64
	// Platform is "os/arch[/variant]"; empty means this host's.
	Platform string
	// Transport carries the registry requests; nil means
	// go-containerregistry's default. Tests use it to route names.
	Transport http.RoundTripper
}

// Store is the image cache under one directory:
//
//	<root>/<hex>/rootfs/      an unpacked image, keyed by its digest's hex
//	<root>/<hex>/image.json   its Config
//	<root>/.tmp/              pulls in progress and trees being removed
//	<root>/.locks/            lock files (lock.go)
//
// An image directory appears by one rename once complete, and is never
// changed after, so its presence means it is whole.
type Store struct {
	root     string
	opts     Options
	platform v1.Platform
	insecure map[string]bool

	mu   sync.Mutex
	busy map[string]chan struct{} // digests a goroutine is pulling
}

const (
	tmpDir    = ".tmp"
	locksDir  = ".locks"
	rootfsDir = "rootfs"
	metaFile  = "image.json"
)

// Open prepares the cache directory and checks the options, including
// that the auth file reads.
func Open(root string, opts Options) (*Store, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.Transport == nil {
		opts.Transport = remote.DefaultTransport
	}
	platform := v1.Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	if opts.Platform != "" {
		p, err := v1.ParsePlatform(opts.Platform)
		if err != nil || p.OS == "" || p.Architecture == "" {
			return nil, fmt.Errorf("image store: platform %q: want os/arch[/variant]", opts.Platform)
		}
		platform = *p
	}
	insecure, err := insecureSet(opts.Insecure)
	if err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	if _, err := loadKeychain(opts.AuthFile); err != nil {
		return nil, fmt.Errorf("image store: %w", err)
	}
	for _, d := range []string{root, filepath.Join(root, tmpDir), filepath.Join(root, locksDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("image store: %w", err)
		}
	}
	spreadSubdirs(filepath.Join(root, tmpDir))
	return &Store{root: root, opts: opts, platform: platform, insecure: insecure, busy: map[string]chan struct{}{}}, nil
}

// spreadSubdirs marks dir, where pulls unpack, as the top of unrelated
// trees for ext4's inode allocator (FS_TOPDIR_FL, chattr +T): each tree
// then starts in a block group of its own choosing rather than beside the
// trees last removed there. Without a journal, ext4 skips inodes freed in
// the last half minute one by one on every file it creates, which made
// creating an image's files after removing another's several times
// slower (BenchmarkFirstPullVsPodman). Elsewhere it does nothing.
func spreadSubdirs(dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	flags, err := unix.IoctlGetUint32(fd, unix.FS_IOC_GETFLAGS)
	if err != nil || flags&topdirFlag != 0 {
		return
	}
	unix.IoctlSetPointerInt(fd, unix.FS_IOC_SETFLAGS, int(flags|topdirFlag))
}

// topdirFlag is FS_TOPDIR_FL in linux/fs.h (golang.org/x/sys has none).
const topdirFlag = 0x20000

// Platform is the platform the store pulls for, "os/arch[/variant]".
func (s *Store) Platform() string { return s.platform.String() }

func (s *Store) path(elem ...string) string {
	return filepath.Join(append([]string{s.root}, elem...)...)
}

// Config is what the store keeps of an image beside its tree.
type Config struct {
	Ref        Ref      `json:"ref"`
	Platform   string   `json:"platform"`
	Env        []string `json:"env,omitempty"`
	WorkingDir string   `json:"working_dir,omitempty"`
	User       string   `json:"user,omitempty"`
	// Bytes is the uncompressed size of the layers.
	Bytes int64 `json:"bytes"`
	// Dropped counts the entries left out: device nodes, fifos, sockets.
	Dropped int `json:"dropped,omitempty"`
	// Cleared counts the files and directories whose setuid or setgid bit
	// was removed.
	Cleared int `json:"cleared,omitempty"`
	// MountPoints are the paths the store added for the jail's mounts
	// (addMountPoints): empty directories and files, and links.
	MountPoints []string  `json:"mount_points,omitempty"`
	Pulled      time.Time `json:"pulled"`
}

// Image is an unpacked image in use. Release it when the run is done, so
// that Sweep may remove it.
type Image struct {
	Config
	// Root is the unpacked root filesystem: bind it read-only, never write.
	Root string

	lease *os.File
	touch func()
}

// Release lets Sweep remove the image again, once it has not been used
// for the retention time. It is safe to call twice.
func (im *Image) Release() error {
	if im.lease == nil {
		return nil
	}
	im.touch()
	err := im.lease.Close()
	im.lease = nil
	return err
}

var hexDigest = regexp.MustCompile(`^sha256:([0-9a-f]{64})$`)

// digestHex is the digest's hex, the name of its directory.
func digestHex(digest string) (string, error) {
	m := hexDigest.FindStringSubmatch(digest)
	if m == nil {
		return "", fmt.Errorf("image digest %q: %w: want sha256:<64 hex digits>", digest, ErrBadReference)
	}
	return m[1], nil
}

// load reads a complete image's Config; fs.ErrNotExist when there is none.
func (s *Store) load(hex string) (*Image, error) {
	b, err := os.ReadFile(s.path(hex, metaFile))
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("image %s: %s: %w", hex, metaFile, err)
	}
	return &Image{Config: c, Root: s.path(hex, rootfsDir)}, nil
}
