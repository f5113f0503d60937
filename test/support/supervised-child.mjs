// A child for the Supervisor tests, forked by node:cluster. SUPERVISED_CHILD=exit-at-once dies before it
// could ever be up; SUPERVISED_CHILD=exit-when-told runs (a worker child is up once online) and dies
// when its primary sends it any message.
if (process.env.SUPERVISED_CHILD === 'exit-at-once') process.exit(1);
process.on('message', () => process.exit(1));
