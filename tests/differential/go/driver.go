// The differential driver for golang.org/x/time/rate (tests/integration/differential/go.rs).
//
// Input: a config line `config LIMIT BURST allow|reserve [MAX_DELAY_NS]`, then `TIME_NS KEY [COST]`
// per hit (COST n, 1 when absent: AllowN / ReserveN with n), for as many traces as given; a new
// config starts new limiters. LIMIT is `every:NS`
// (rate.Every) or `avg:AVERAGE:PERIOD_NS` (Traefik's float64(average*1e9)/float64(period)).
// One rate.Limiter per key, created at the key's first hit, as a keyed Go service does. Output
// per hit: `A TOKENS` when Allow admits, `R TOKENS` when it refuses, `D DELAY_NS TOKENS` for a
// Reserve, and with MAX_DELAY_NS, `C TOKENS` when the Reserve's delay is over it and the
// reservation is cancelled at the same instant (Traefik's rateLimit middleware: Reserve,
// `if delay > maxDelay { res.Cancel() }`), `X TOKENS` when the reservation is not OK (n above
// the burst); TOKENS is TokensAt the hit's instant after the call, as float64 bits in hex
// (exact).
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
	var limit rate.Limit
	var burst int
	reserve := false
	maxDelay := time.Duration(-1)
	limiters := map[string]*rate.Limiter{}
	for in.Scan() {
		f := strings.Fields(in.Text())
		if (len(f) == 4 || len(f) == 5) && f[0] == "config" {
			l, err1 := parseLimit(f[1])
			b, err2 := strconv.Atoi(f[2])
			var err3 error
			maxDelay = -1
			if len(f) == 5 {
				var m int64
				m, err3 = strconv.ParseInt(f[4], 10, 64)
				maxDelay = time.Duration(m)
			}
			if err1 != nil || err2 != nil || err3 != nil {
				fmt.Fprintln(os.Stderr, "bad config line:", in.Text())
				os.Exit(2)
			}
			limit, burst, reserve = l, b, f[3] == "reserve"
			limiters = map[string]*rate.Limiter{}
			continue
		}
		if len(f) != 2 && len(f) != 3 {
			fmt.Fprintln(os.Stderr, "bad hit line:", in.Text())
			os.Exit(2)
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		n := 1
		if err == nil && len(f) == 3 {
			n, err = strconv.Atoi(f[2])
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bad time or cost:", in.Text())
			os.Exit(2)
		}
		lim, ok := limiters[f[1]]
		if !ok {
			lim = rate.NewLimiter(limit, burst)
			limiters[f[1]] = lim
		}
		t := time.Unix(0, ns)
		if reserve {
			r := lim.ReserveN(t, n)
			if !r.OK() {
				fmt.Fprintf(out, "X %x\n", math.Float64bits(lim.TokensAt(t)))
				continue
			}
			delay := r.DelayFrom(t)
			if maxDelay >= 0 && delay > maxDelay {
				r.CancelAt(t)
				fmt.Fprintf(out, "C %x\n", math.Float64bits(lim.TokensAt(t)))
				continue
			}
			fmt.Fprintf(out, "D %d %x\n", delay.Nanoseconds(), math.Float64bits(lim.TokensAt(t)))
		} else if lim.AllowN(t, n) {
			fmt.Fprintf(out, "A %x\n", math.Float64bits(lim.TokensAt(t)))
		} else {
			fmt.Fprintf(out, "R %x\n", math.Float64bits(lim.TokensAt(t)))
		}
	}
}

// parseLimit reads `every:NS` or `avg:AVERAGE:PERIOD_NS`.
func parseLimit(spec string) (rate.Limit, error) {
	f := strings.Split(spec, ":")
	if len(f) == 2 && f[0] == "every" {
		e, err := strconv.ParseInt(f[1], 10, 64)
		return rate.Every(time.Duration(e)), err
	}
	if len(f) == 3 && f[0] == "avg" {
		a, err1 := strconv.ParseInt(f[1], 10, 64)
		p, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil {
			return 0, err1
		}
		// Traefik's pkg/middlewares/ratelimiter/rate_limiter.go: rate.Limit(float64(average*1e9) / float64(period)).
		return rate.Limit(float64(a*int64(time.Second)) / float64(p)), err2
	}
	return 0, fmt.Errorf("bad limit %q", spec)
}
