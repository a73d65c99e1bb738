//go:build !unix

package proc

func termVictim(v victim) { terminateGroup(v.id) }
func killVictim(v victim) { killGroup(v.id) }
