// Episode pages: drawn from the embedded JSON when the address ends in #ep-<key>, so a report of
// thousands of episodes opens at once. Text goes in through textContent only.
"use strict";
const episodes = JSON.parse(document.getElementById("episode-data").textContent);

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props || {});
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

function diffText(text) {
  const pre = el("pre", {className: "diff"});
  for (const line of text.split("\n")) {
    let cls = "";
    if (line.startsWith("+") && !line.startsWith("+++")) cls = "add";
    else if (line.startsWith("-") && !line.startsWith("---")) cls = "del";
    else if (line.startsWith("@@")) cls = "hunk";
    pre.append(cls ? el("span", {className: cls, textContent: line}) : line + "\n");
  }
  return pre;
}

function table(rows) {
  return el("table", {className: "facts"},
    ...rows.map(([key, value]) => el("tr", {}, el("th", {textContent: key}), el("td", {textContent: String(value)}))));
}

function step(item) {
  const call = item.tool + "(" + (item.arguments ? JSON.stringify(item.arguments) : "") + ")";
  const head = el("div", {}, el("b", {textContent: "step " + item.step + " "}), el("code", {textContent: call}));
  if (item.error) head.append(el("span", {className: "badge no", textContent: "error"}));
  if (item.max_score !== null && item.max_score !== undefined)
    head.append(el("span", {className: "badge", textContent: "eval " + item.score + "/" + item.max_score}));
  if (item.tools_enabled) head.append(el("span", {className: "badge", textContent: "unlocked " + item.tools_enabled.join(", ")}));
  const body = item.tool === "edit" ? diffText(item.observation) : el("pre", {textContent: item.observation});
  const details = el("details", {open: item.max_score !== null && item.max_score !== undefined},
    el("summary", {textContent: "observation (" + item.observation.length + " characters, " + item.seconds + " s)"}), body);
  const li = el("li", {className: item.error ? "failed" : (item.max_score ? "scored" : "")}, head);
  if (item.thought) li.append(el("div", {className: "thought", textContent: item.thought}));
  li.append(details);
  return li;
}

function page(d) {
  return [
    el("p", {}, el("a", {href: "#summary", textContent: "← summary"}), " · ",
       el("a", {href: "#arm-" + d.arm_index, textContent: "← episodes of " + d.arm})),
    el("h1", {textContent: d.name}),
    table([["run", d.run], ["arm", d.arm], ["task", d.task + " (" + d.task_set + ")"], ...d.facts,
           ["ended by", d.truncated_by || "submit, success or the agent"]]),
    el("details", {}, el("summary", {textContent: "problem statement and tools"}), el("pre", {textContent: d.problem})),
    el("h2", {textContent: "Where the budget went (tokens)"}),
    table(d.budget),
    el("h2", {textContent: "Timeline"}),
    el("ol", {className: "timeline"}, ...d.timeline.map(step)),
    el("h2", {textContent: "Final diff"}),
    d.diff ? diffText(d.diff) : el("p", {className: "muted", textContent: "no change"}),
  ];
}

function show() {
  const match = location.hash.match(/^#ep-(.+)$/);
  const overview = document.getElementById("overview");
  const article = document.getElementById("episode");
  if (match && episodes[match[1]]) {
    article.replaceChildren(...page(episodes[match[1]]));
    overview.hidden = true;
    article.hidden = false;
    window.scrollTo(0, 0);
  } else {
    article.hidden = true;
    overview.hidden = false;
    const target = location.hash && document.getElementById(location.hash.slice(1));
    if (target) target.scrollIntoView();
  }
}

window.addEventListener("hashchange", show);
show();
