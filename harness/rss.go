package harness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// PeakRSS returns the peak resident set size, in bytes, of this process and
// of its kube-apiserver and etcd children, from /proc (VmHWM), keyed by
// "self", "kube-apiserver" and "etcd". It is for benchmarks and reports; on
// a system without /proc it returns an error.
func PeakRSS() (map[string]int64, error) {
	self := os.Getpid()
	out := map[string]int64{}
	hwm, _, err := procStatus(self)
	if err != nil {
		return nil, err
	}
	out["self"] = hwm
	dirs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(filepath.Base(d))
		if err != nil || pid == self {
			continue
		}
		hwm, ppid, err := procStatus(pid)
		if err != nil || ppid != self {
			continue
		}
		comm, err := os.ReadFile(filepath.Join(d, "comm"))
		if err != nil {
			continue
		}
		if name := strings.TrimSpace(string(comm)); name == "kube-apiserver" || name == "etcd" {
			out[name] = max(out[name], hwm)
		}
	}
	return out, nil
}

// procStatus reads VmHWM (in bytes) and PPid from /proc/PID/status.
func procStatus(pid int) (hwm int64, ppid int, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		f := strings.Fields(v)
		if len(f) == 0 {
			continue
		}
		switch k {
		case "VmHWM":
			kb, _ := strconv.ParseInt(f[0], 10, 64)
			hwm = kb * 1024
		case "PPid":
			ppid, _ = strconv.Atoi(f[0])
		}
	}
	return hwm, ppid, sc.Err()
}
