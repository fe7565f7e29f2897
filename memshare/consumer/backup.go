package consumer

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/caravan-dl/caravan/memshare/nbd"
)

// backupFile is backup mode's local copy, opened with O_DIRECT where the
// filesystem allows, so a write costs what the disk costs (as swap would).
type backupFile struct {
	f      *os.File
	direct bool
}

func openBackup(path string, size uint64) (*backupFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oDirect, 0o600)
	direct := err == nil && oDirect != 0
	if err != nil {
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600) // tmpfs has no O_DIRECT
	}
	if err != nil {
		return nil, fmt.Errorf("backup_path: %w", err)
	}
	if err := f.Truncate(int64(size)); err != nil {
		f.Close()
		return nil, fmt.Errorf("backup_path: %w", err)
	}
	return &backupFile{f: f, direct: direct}, nil
}

// Direct reports whether the file bypasses the page cache.
func (b *backupFile) Direct() bool { return b.direct }

func (b *backupFile) writeAt(p []byte, off uint64) error {
	if b.direct && !aligned(p) {
		a := alignedBuf(len(p))
		copy(a, p)
		p = a
	}
	_, err := b.f.WriteAt(p, int64(off))
	return err
}

func (b *backupFile) readAt(p []byte, off uint64) error {
	dst := p
	if b.direct && !aligned(p) {
		dst = alignedBuf(len(p))
	}
	if _, err := b.f.ReadAt(dst, int64(off)); err != nil {
		return err
	}
	if &dst[0] != &p[0] {
		copy(p, dst)
	}
	return nil
}

func (b *backupFile) sync() error  { return b.f.Sync() }
func (b *backupFile) close() error { return b.f.Close() }

func aligned(p []byte) bool { return uintptr(unsafe.Pointer(&p[0]))%BlockSize == 0 }

func alignedBuf(n int) []byte {
	b := make([]byte, n+BlockSize)
	skip := (BlockSize - int(uintptr(unsafe.Pointer(&b[0]))%BlockSize)) % BlockSize
	return b[skip : skip+n]
}

var errBackup = &nbd.Error{Errno: nbd.EIO, Msg: "backup file I/O failed"}

// readBackupMode reads the remote slab, falling back to the file.
func (v *Volume) readBackupMode(st *stripe, sh *shard, b0 uint64, out []byte) error {
	if sh != nil {
		err := sh.readAt(out, b0*BlockSize)
		if err == nil {
			return nil
		}
		v.markDead(st, 0, sh, err)
	}
	v.m.degradedReads.Inc()
	if err := v.backup.readAt(out, v.fileOffset(st, b0)); err != nil {
		return errBackup
	}
	return nil
}

// writeBackupMode writes the file and the remote slab (and a replacement
// being rebuilt) at once and returns when all are done: write-through.
func (v *Volume) writeBackupMode(st *stripe, cur, next *shard, b0 uint64, data []byte) error {
	var fileErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); fileErr = v.backup.writeAt(data, v.fileOffset(st, b0)) }()
	if cur != nil {
		if err := cur.writeAt(data, b0*BlockSize); err != nil {
			v.markDead(st, 0, cur, err)
		}
	}
	if next != nil {
		if err := next.writeAt(data, b0*BlockSize); err != nil {
			v.abortRebuild(st, 0, next, err)
		}
	}
	wg.Wait()
	if fileErr != nil {
		return errors.Join(errBackup, fileErr)
	}
	return nil
}

func (v *Volume) fileOffset(st *stripe, b0 uint64) uint64 {
	return uint64(st.idx)*v.blocks*BlockSize + b0*BlockSize
}
