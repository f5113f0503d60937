// A child for the Supervisor tests, forked by node:cluster. SUPERVISED_CHILD=exit-at-once dies before it
// could ever be up. SUPERVISED_CHILD=up-then-exit-when-told sends UP_MESSAGE (what a worker child sends
// its primary once it runs) after it listens for messages, and dies when its primary sends it one.
if (process.env.SUPERVISED_CHILD === 'exit-at-once') process.exit(1);
process.on('message', () => process.exit(1));
process.send(process.env.UP_MESSAGE);
