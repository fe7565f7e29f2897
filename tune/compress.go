package tune

// maxState bounds a decompressed state (a corrupt or hostile Variable
// cannot make the tuner allocate without limit).
const maxState = 64 << 20
