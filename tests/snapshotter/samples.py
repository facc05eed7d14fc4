"""Sample documents shared by the extraction tests (a news page, a report's pages)."""

from __future__ import annotations

ARTICLE = [
    "A three-year study of the city harbour found that plastic waste collected from the water"
    " fell by 42 percent between 2021 and 2024, the port authority said on Monday.",
    "The researchers counted 18,400 items in the first year and 10,672 items in the last year,"
    " sampling the same twelve sites every month with the same nets and the same volunteers.",
    "The authority plans to extend the sampling to the river mouth next spring and will publish"
    " the raw counts online.",
]

PAGE = f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Harbour study finds 42% drop in plastic waste</title>
<script>window.dataLayer = window.dataLayer || []; function gtag(){{}}</script>
<style>.cookie-consent {{ position: fixed; }}</style>
</head>
<body>
<div id="cookie-banner" class="cookie-consent">
  <p>We use cookies to improve your experience. By continuing you accept our cookie policy.</p>
  <button>Accept all cookies</button>
</div>
<header>
  <nav class="main-nav"><ul>
    <li><a href="/">Home</a></li><li><a href="/news">News</a></li>
    <li><a href="/sport">Sport</a></li><li><a href="/weather">Weather forecast</a></li>
  </ul></nav>
</header>
<main>
<article>
  <h1>Harbour study finds 42% drop in plastic waste</h1>
  <p>{ARTICLE[0]}</p>
  <p>{ARTICLE[1]}</p>
  <p>"We did not expect the decline to be this steep," said Dr. Amal Rahman, who led the
  survey. She attributed most of the fall to the deposit scheme introduced in 2022.</p>
  <table><tr><th>Year</th><th>Items</th></tr>
  <tr><td>2021</td><td>18400</td></tr><tr><td>2024</td><td>10672</td></tr></table>
  <p>{ARTICLE[2]}</p>
</article>
</main>
<aside class="related"><h3>Related stories</h3><ul>
  <li><a href="/x">Ferry timetable changes</a></li><li><a href="/y">New cycle lane opens</a></li>
</ul></aside>
<footer><p>© 2025 Harbour Gazette. All rights reserved.</p>
<a href="/privacy">Privacy</a> <a href="/terms">Terms of use</a></footer>
</body>
</html>
"""

JS_SHELL = """<!doctype html><html><head><title>App</title>
<script src="/static/bundle.3f9a.js"></script></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
</body></html>"""

LOGIN_WALL = """<!doctype html><html><head><title>Sign in</title></head><body>
<form action="/login" method="post"><h2>Please sign in to continue reading</h2>
<input name="user"><input name="password" type="password"><button>Sign in</button></form>
</body></html>"""

FILLER = "The committee met on the same day and approved the budget without amendments."
# The filler is inside each page, not at its foot: a line repeated at the foot of every page
# is a running footer, which extraction keeps out of the text flow (see pdf_furniture).
PAGES = [
    ["Preface", FILLER, "This report summarises the survey results for the period under review."],
    ["Contents", FILLER, "1 Method", "2 Results"],
    ["1 Method", FILLER, "Twelve sites were sampled every month (2021-2024)."],
    ["2 Results", FILLER, "Plastic waste fell by 42 percent; 10,672 items were counted in 2024."],
]
