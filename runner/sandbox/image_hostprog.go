package sandbox

import (
	"bufio"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// hostProgramFits reports, as an error saying why not, whether p, a
// program of the host, can run in a jail on im when bound there read-only
// (programFiles): a statically linked binary can; a script can when its
// interpreter is in the image (`#!/usr/bin/env node` looked up in the
// image's PATH, path); a dynamically linked binary cannot, as the image's
// libraries are not the host's.
func hostProgramFits(im *Image, p, path string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, 2)
	if _, err := f.ReadAt(head, 0); err != nil {
		return fmt.Errorf("read %s: %w", p, err)
	}
	if string(head) == "#!" {
		return interpreterFits(im, f, path)
	}
	ef, err := elf.NewFile(f)
	if err != nil {
		return errors.New("it is neither a script nor an ELF program")
	}
	for _, prog := range ef.Progs {
		if prog.Type == elf.PT_INTERP {
			return errors.New("the host's copy is dynamically linked against the host's libraries")
		}
	}
	return nil
}

// interpreterFits checks the #! line of script f.
func interpreterFits(im *Image, f *os.File, path string) error {
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return fmt.Errorf("read %s: %w", f.Name(), err)
	}
	fields := strings.Fields(strings.TrimPrefix(line, "#!"))
	if len(fields) == 0 {
		return errors.New("its #! line names no interpreter")
	}
	interp := fields[0]
	if filepath.Base(interp) == "env" {
		for _, a := range fields[1:] {
			if strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
				continue
			}
			for _, d := range filepath.SplitList(path) {
				if filepath.IsAbs(d) && executableInImage(im.Root, filepath.Join(d, a)) {
					return nil
				}
			}
			return fmt.Errorf("its interpreter `%s` is not in the image", a)
		}
	}
	if !executableInImage(im.Root, interp) {
		return fmt.Errorf("its interpreter %s is not in the image", interp)
	}
	return nil
}
