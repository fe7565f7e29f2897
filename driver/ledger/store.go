package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

const fileVersion = 1

// file is the ledger's on-disk form.
type file struct {
	Version int     `json:"version"`
	Grants  []Grant `json:"grants"`
}

// load reads the grants kept at path. A missing file is an empty ledger;
// anything unreadable is an error that leaves the file as it is, so a
// damaged ledger is never replaced by an empty one behind anyone's back.
func load(path string) ([]Grant, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ledger: read %s: %w", path, err)
	}
	corrupt := func(why string) error {
		return fmt.Errorf("ledger file %s is corrupt (%s); it was left untouched: "+
			"repair it, or move it aside to start with an empty ledger", path, why)
	}
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, corrupt(err.Error())
	}
	if dec.More() {
		return nil, corrupt("trailing data after the JSON document")
	}
	if f.Version != fileVersion {
		return nil, corrupt(fmt.Sprintf("version %d, want %d", f.Version, fileVersion))
	}
	seen := map[[2]string]bool{}
	for i, g := range f.Grants {
		if err := checkStored(g); err != nil {
			return nil, corrupt(fmt.Sprintf("grant %d: %v", i, err))
		}
		key := [2]string{g.TaskID, g.UUID}
		if seen[key] {
			return nil, corrupt(fmt.Sprintf("grant %d: task %q holds GPU %s twice", i, g.TaskID, g.UUID))
		}
		seen[key] = true
	}
	return f.Grants, nil
}

func checkStored(g Grant) error {
	switch {
	case g.TaskID == "":
		return errors.New("empty task_id")
	case g.UUID == "":
		return errors.New("empty uuid")
	case math.IsNaN(g.Fraction) || g.Fraction <= 0 || g.Fraction > 1:
		return fmt.Errorf("fraction %v is outside (0,1]", g.Fraction)
	}
	return nil
}

// saveLocked writes the ledger atomically: a temporary file in the same
// directory, fsynced, renamed over the old one, then the directory fsynced,
// so a crash leaves either the old or the new ledger, never a torn one.
func (l *Ledger) saveLocked() error {
	if l.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(file{Version: fileVersion, Grants: l.allLocked()}, "", "  ")
	if err != nil {
		return fmt.Errorf("ledger: encode: %w", err)
	}
	if err := writeAtomic(l.path, append(data, '\n')); err != nil {
		return fmt.Errorf("ledger: save %s: %w", l.path, err)
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
