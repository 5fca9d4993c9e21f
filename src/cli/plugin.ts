// The kubectl plugins' entry (bin/kubectl-timeline, bin/kubectl-why): `plugin.js why|timeline ARGS`
// runs the same commands as `kite why|timeline` but loads only what they need, not the server,
// the kubelet and the sim that main.js imports, so `kubectl why` answers in a fraction of the time.
import { failureText } from './report.js';
import { timelineCommand, whyCommand } from './timeline.js';

const [command, ...rest] = process.argv.slice(2);
const run = command === 'why' ? whyCommand : command === 'timeline' ? timelineCommand : undefined;
if (!run) {
  process.stderr.write(`error: unknown plugin command "${command ?? ''}" (why or timeline)\n`);
  process.exit(1);
}
run(rest).catch((err: unknown) => {
  process.stderr.write(failureText(err));
  process.exit(1);
});
