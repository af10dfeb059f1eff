// Episode pages (#ep-<key>) and a task's episodes side by side (#cmp-<row>): drawn from the embedded JSON
// when the address asks for them, so a report of thousands of episodes opens at once. Text goes in through
// textContent only.
"use strict";
const data = JSON.parse(document.getElementById("episode-data").textContent);
const episodes = data.episodes;

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

function step(item, compact) {
  const call = item.tool + "(" + (item.arguments ? JSON.stringify(item.arguments) : "") + ")";
  const head = el("div", {}, el("b", {textContent: "step " + item.step + " "}), el("code", {textContent: call}));
  if (item.error) head.append(el("span", {className: "badge no", textContent: "error"}));
  if (item.max_score !== null && item.max_score !== undefined)
    head.append(el("span", {className: "badge", textContent: "eval " + item.score + "/" + item.max_score}));
  if (item.tools_enabled) head.append(el("span", {className: "badge", textContent: "unlocked " + item.tools_enabled.join(", ")}));
  if (item.suspicious) head.append(el("span", {className: "badge warn", textContent: "suspicious eval",
                                               title: item.suspicious.join("; ")}));
  const body = item.tool === "edit" ? diffText(item.observation) : el("pre", {textContent: item.observation});
  const details = el("details", {open: !compact && item.max_score !== null && item.max_score !== undefined},
    el("summary", {textContent: "observation (" + item.observation.length + " characters, " + item.seconds + " s)"}), body);
  const li = el("li", {className: item.error ? "failed" : (item.max_score ? "scored" : "")}, head);
  if (item.thought) li.append(el("div", {className: "thought", textContent: item.thought}));
  li.append(details);
  if (item.suspicious) li.append(el("div", {className: "note suspicious", textContent: "suspicious: " + item.suspicious.join("; ")}));
  if (item.note) li.append(el("div", {className: "note unlock", textContent: item.note}));
  return li;
}

function armName(d) {
  return el("span", {}, el("span", {className: "swatch", style: "background: " + d.colour}), d.arm);
}

function badges(d) {
  const span = el("span", {});
  if (d.suspicious.length) span.append(el("span", {className: "badge warn", textContent: "suspicious eval",
                                                    title: d.suspicious.join("; ")}));
  return span;
}

function page(d) {
  return [
    el("p", {}, el("a", {href: "#summary", textContent: "← summary"}), " · ",
       el("a", {href: "#tasks", textContent: "← per task"}), " · ",
       el("a", {href: "#arm-" + d.arm_index, textContent: "← episodes of " + d.arm})),
    el("h1", {textContent: d.name}, badges(d)),
    el("p", {className: "arm"}, armName(d)),
    table([["run", d.run], ["arm", d.arm], ["task", d.task + " (" + d.task_set + ")"], ...d.facts,
           ["ended by", d.truncated_by || "submit, success or the agent"]]),
    el("details", {}, el("summary", {textContent: "problem statement and tools"}), el("pre", {textContent: d.problem})),
    el("h2", {textContent: "Where the budget went (tokens)"}),
    table(d.budget),
    el("h2", {textContent: "Timeline"}),
    el("ol", {className: "timeline"}, ...d.timeline.map(item => step(item, false))),
    el("h2", {textContent: "Final diff"}),
    d.diff ? diffText(d.diff) : el("p", {className: "muted", textContent: "no change"}),
  ];
}

function sideBySide(keys) {
  const columns = el("div", {className: "columns", style: "grid-template-columns: repeat(" + keys.length + ", 1fr)"});
  for (const key of keys) {
    const d = episodes[key];
    columns.append(el("section", {style: "border-top-color: " + d.colour},
      el("h2", {}, armName(d)),
      el("p", {}, el("a", {href: "#ep-" + key, textContent: d.name}), " ",
         el("span", {className: d.solved ? "yes" : "no", textContent: d.solved ? "solved" : "unsolved"}), badges(d)),
      table(d.facts.slice(2, 6)),
      el("ol", {className: "timeline"}, ...d.timeline.map(item => step(item, true)))));
  }
  const first = episodes[keys[0]];
  return [
    el("p", {}, el("a", {href: "#tasks", textContent: "← per task"})),
    el("h1", {textContent: first.task + " side by side"}),
    columns,
  ];
}

function show() {
  const match = location.hash.match(/^#ep-(.+)$/);
  const group = location.hash.match(/^#cmp-(\d+)$/);
  const overview = document.getElementById("overview");
  const article = document.getElementById("episode");
  const drawn = match && episodes[match[1]] ? page(episodes[match[1]])
    : group && data.groups[group[1]] ? sideBySide(data.groups[group[1]]) : null;
  if (drawn) {
    article.replaceChildren(...drawn);
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
