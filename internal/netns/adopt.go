package netns

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Adopt binds an existing network namespace (path: a namespace file such
// as /proc/<pid>/ns/net or another bind mount of one) at /run/netns/name,
// so it can be entered by name like one made by Create. Delete unbinds it
// again; the namespace itself lives on as long as its owner holds it. An
// existing name is an error (EEXIST). On error nothing is left.
func Adopt(name, path string) (NS, error) {
	n := Named(name)
	if name == "" || strings.ContainsRune(name, '/') {
		return NS{}, fmt.Errorf("adopt netns %q: want a plain name", name)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return NS{}, fmt.Errorf("adopt %s from %s: %w", n, path, err)
	}
	if st.Type != unix.NSFS_MAGIC {
		return NS{}, fmt.Errorf("adopt %s: %s is not a namespace file", n, path)
	}
	if err := reserve(n); err != nil {
		return NS{}, fmt.Errorf("adopt %s: %w", n, err)
	}
	if err := unix.Mount(path, n.path, "none", unix.MS_BIND, ""); err != nil {
		return NS{}, errors.Join(fmt.Errorf("adopt %s: bind %s: %w", n, path, err), os.Remove(n.path))
	}
	return n, nil
}
