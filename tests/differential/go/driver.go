// The differential driver for golang.org/x/time/rate (tests/integration/differential/go.rs).
//
// Input: a config line `config EVERY_NS BURST allow|reserve`, then `TIME_NS KEY` per hit, for
// as many traces as given; a new config starts new limiters. One rate.Limiter per key, created
// at the key's first hit, as a keyed Go service does. Output per hit: `A TOKENS` when Allow
// admits, `R TOKENS` when it refuses, `D DELAY_NS TOKENS` for a Reserve; TOKENS is TokensAt
// the hit's instant after the call, as float64 bits in hex (exact).
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var every time.Duration
	var burst int
	reserve := false
	limiters := map[string]*rate.Limiter{}
	for in.Scan() {
		f := strings.Fields(in.Text())
		if len(f) == 4 && f[0] == "config" {
			e, err1 := strconv.ParseInt(f[1], 10, 64)
			b, err2 := strconv.Atoi(f[2])
			if err1 != nil || err2 != nil {
				fmt.Fprintln(os.Stderr, "bad config line:", in.Text())
				os.Exit(2)
			}
			every, burst, reserve = time.Duration(e), b, f[3] == "reserve"
			limiters = map[string]*rate.Limiter{}
			continue
		}
		if len(f) != 2 {
			fmt.Fprintln(os.Stderr, "bad hit line:", in.Text())
			os.Exit(2)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad time:", in.Text())
			os.Exit(2)
		}
		lim, ok := limiters[f[1]]
		if !ok {
			lim = rate.NewLimiter(rate.Every(every), burst)
			limiters[f[1]] = lim
		}
		t := time.Unix(0, ns)
		if reserve {
			r := lim.ReserveN(t, 1)
			if !r.OK() {
				fmt.Fprintln(out, "X")
				continue
			}
			fmt.Fprintf(out, "D %d %x\n", r.DelayFrom(t).Nanoseconds(), math.Float64bits(lim.TokensAt(t)))
		} else if lim.AllowN(t, 1) {
			fmt.Fprintf(out, "A %x\n", math.Float64bits(lim.TokensAt(t)))
		} else {
			fmt.Fprintf(out, "R %x\n", math.Float64bits(lim.TokensAt(t)))
		}
	}
}
