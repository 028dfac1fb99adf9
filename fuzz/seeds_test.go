package fuzz

// edgePrograms are hand-written FuzzLogOps programs, added with f.Add.
func edgePrograms() []program {
	return []program{
		{ops: []op{{opAppend, 0x07, 0x01, 0x00}, {opRead, 0, 0, 0}, {opFlush, 0, 0, 0}, {opCrash, 0x06, 1, 0}}},
	}
}
