package producer

import (
	"errors"

	"github.com/segkit/segkit/format"
	"github.com/segkit/segkit/vfs"
)

// TakeSnapshot writes a snapshot of s at MapEndOffset into dir, unless
// one at or above that offset was already taken or loaded
// (ProducerStateManager.takeSnapshot). It reports whether it wrote one.
func (s *State) TakeSnapshot(fsys vfs.FS, dir string) (bool, error) {
	if s.mapEndOffset <= s.lastSnapOffset {
		return false, nil
	}
	if err := WriteSnapshot(fsys, dir, s.mapEndOffset, s.Snapshot()); err != nil {
		return false, err
	}
	s.lastSnapOffset = s.mapEndOffset
	return true, nil
}

// TruncateAndReload brings s in line with a log holding the offsets
// [logStartOffset, logEndOffset), as ProducerStateManager.truncateAndReload
// does: it deletes the snapshots of dir above logEndOffset or at or below
// logStartOffset; then, if MapEndOffset is not logEndOffset, it clears the
// state and loads the latest remaining snapshot, deleting (as Kafka does)
// any that fails to decode and trying the next older one; with none left
// the state starts empty at logStartOffset. The caller then replays the
// batches from MapEndOffset to the log end.
//
// skipped lists the corrupt snapshots it deleted (*format.CorruptionError);
// err is an I/O error.
func (s *State) TruncateAndReload(fsys vfs.FS, dir string, logStartOffset, logEndOffset int64) (skipped []error, err error) {
	offsets, err := ListSnapshots(fsys, dir)
	if err != nil {
		return nil, err
	}
	kept := offsets[:0]
	for _, off := range offsets {
		if off > logEndOffset || off <= logStartOffset {
			if err := DeleteSnapshot(fsys, dir, off); err != nil {
				return nil, err
			}
			continue
		}
		kept = append(kept, off)
	}
	if logEndOffset == s.mapEndOffset {
		s.OnLogStartOffsetIncremented(logStartOffset)
		s.lastSnapOffset = logStartOffset
		if n := len(kept); n > 0 {
			s.lastSnapOffset = kept[n-1]
		}
		return nil, nil
	}
	s.clear()
	for i := len(kept) - 1; i >= 0; i-- {
		entries, err := ReadSnapshot(fsys, dir, kept[i])
		var ce *format.CorruptionError
		if errors.As(err, &ce) {
			skipped = append(skipped, err)
			if err := DeleteSnapshot(fsys, dir, kept[i]); err != nil {
				return skipped, err
			}
			continue
		}
		if err != nil {
			return skipped, err
		}
		s.Load(entries, kept[i])
		return skipped, nil
	}
	s.mapEndOffset, s.lastSnapOffset = logStartOffset, logStartOffset
	return skipped, nil
}
