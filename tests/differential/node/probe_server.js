// A real express app limited by express-rate-limit, on a loopback port, for `rlsim probe`
// (tests/integration/probe.rs). Our own code; the packages come from npm (.ci/run).
//
// argv: WINDOW_MS LIMIT. The client is the last X-Forwarded-For entry (`trust proxy` 1: the
// probe stands for one trusted proxy). Answers 200 "ok" under the limit, 429 past it, with the
// draft-7 `RateLimit` header and `Retry-After`. Prints "listening on http://127.0.0.1:PORT".
'use strict';
const express = require('express');
const { rateLimit } = require('express-rate-limit');

const [windowMs, limit] = process.argv.slice(2).map(Number);
const app = express();
app.set('trust proxy', 1);
app.use(rateLimit({ windowMs, limit, standardHeaders: 'draft-7', legacyHeaders: false }));
app.use((req, res) => res.send('ok\n'));
const server = app.listen(0, '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
