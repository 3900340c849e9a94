import { createHash } from 'node:crypto';

/**
 * The one script a bundle runs (docs/widgets.md "Runtime"): inline, allowed by its sha256 in
 * the bundle's CSP. It reads `#placard-context` ({timeZone, width, height, locale}; defaults
 * when absent) and drives what the built-in types mark with classes and data attributes:
 * clocks tick, countdowns count, tickers scroll, carousels and long tables page, agenda
 * entries are grouped by day in the screen's zone, feed dates are formatted, and `.pl-fit`
 * blocks shrink their font until the content fits (unless fontSizePx set --pl-size). No framework.
 */
export const RUNTIME_JS = `(function(){"use strict";
var c={};try{c=JSON.parse(document.getElementById("placard-context").textContent||"{}")||{}}catch(e){}
var tz=c.timeZone||undefined,loc=c.locale||document.documentElement.lang||undefined;
function fmt(o){try{return new Intl.DateTimeFormat(loc,Object.assign({timeZone:tz},o))}catch(e){return new Intl.DateTimeFormat(undefined,o)}}
function all(s){return Array.prototype.slice.call(document.querySelectorAll(s))}
all(".pl-clock").forEach(function(el){var d=el.dataset,o={};
if(d.show!=="date"){o.hour="2-digit";o.minute="2-digit";if(d.seconds==="true")o.second="2-digit";o.hour12=d.hour12==="true"}
var f=fmt(o),g=d.show==="time"?null:fmt({dateStyle:d.dateStyle||"full"});
function t(){var n=new Date();el.textContent=d.show==="date"?g.format(n):d.show==="datetime"?g.format(n)+" "+f.format(n):f.format(n)}
t();setInterval(t,1000)});
all(".pl-countdown").forEach(function(el){var d=el.dataset,v=el.querySelector(".pl-countdown-value"),to=Date.parse(d.target);
function p(n){return(n<10?"0":"")+n}
function t(){var s=Math.max(0,Math.floor((to-Date.now())/1000));
if(s===0&&d.after==="hide"){el.style.visibility="hidden";return}
if(s===0&&d.after==="text"){v.textContent=d.afterText;return}
var dd=Math.floor(s/86400);v.textContent=(dd>0?dd+" ":"")+p(Math.floor(s%86400/3600))+":"+p(Math.floor(s%3600/60))+":"+p(s%60)}
t();setInterval(t,1000)});
all(".pl-ticker").forEach(function(el){var tr=el.querySelector(".pl-ticker-track"),sp=Number(el.dataset.speed)||80,x=-el.clientWidth,last=0;
function step(ts){var w=tr.scrollWidth;if(last){x-=sp*(ts-last)/1000;if(-x>w)x=0}last=ts;tr.style.transform="translateX("+x+"px)";requestAnimationFrame(step)}
requestAnimationFrame(step)});
function cycle(items,ms,on,off){if(items.length<2)return;var i=0;items.forEach(function(e,k){(k?off:on)(e)});
setInterval(function(){off(items[i]);i=(i+1)%items.length;on(items[i])},ms)}
all(".pl-carousel").forEach(function(el){cycle(all(".pl-carousel .pl-slide").filter(function(s){return el.contains(s)}),Number(el.dataset.interval)||6000,function(e){e.classList.add("pl-on")},function(e){e.classList.remove("pl-on")});
var f=el.querySelector(".pl-slide");if(f)f.classList.add("pl-on")});
all(".pl-table").forEach(function(el){cycle(Array.prototype.slice.call(el.querySelectorAll(".pl-page")),Number(el.dataset.pageMs)||8000,function(e){e.style.display=""},function(e){e.style.display="none"})});
var dayF=fmt({weekday:"long",day:"numeric",month:"long"}),hm=fmt({hour:"2-digit",minute:"2-digit"}),dk=fmt({year:"numeric",month:"2-digit",day:"2-digit"});
all(".pl-agenda li[data-start]").reduce(function(prev,li){var s=new Date(li.dataset.start);if(isNaN(s))return prev;
var k=dk.format(s);if(k!==prev){var h=document.createElement("li");h.className="pl-day";h.textContent=dayF.format(s);li.parentNode.insertBefore(h,li)}
var e=new Date(li.dataset.end),w=li.querySelector(".pl-when");if(w)w.textContent=/T/.test(li.dataset.start)?hm.format(s)+(isNaN(e)?"":"–"+hm.format(e)):"";return k},"");
var df=fmt({dateStyle:"medium"});all("time.pl-date").forEach(function(t){var d=new Date(t.getAttribute("datetime"));if(!isNaN(d))t.textContent=df.format(d)});
var own=getComputedStyle(document.body).getPropertyValue("--pl-size").trim()!=="";
function fit(el){el.style.fontSize="";var hi=parseFloat(getComputedStyle(el).fontSize),lo=Math.min(hi,Math.max(6,Math.min(innerWidth,innerHeight)*.04));
function ok(){return el.scrollHeight<=el.clientHeight+1&&el.scrollWidth<=el.clientWidth+1}
if(!own&&!ok()){for(var i=0;i<12;i++){var m=(lo+hi)/2;el.style.fontSize=m+"px";if(ok())lo=m;else hi=m}el.style.fontSize=lo+"px"}
Array.prototype.forEach.call(el.querySelectorAll("li"),function(li){li.style.visibility=li.style.visibility="";li.style.visibility=li.offsetTop+li.offsetHeight>el.clientHeight+1?"hidden":""})}
function fitAll(){all(".pl-fit").forEach(fit)}fitAll();addEventListener("resize",fitAll);
all(".pl-fit img").forEach(function(i){i.addEventListener("load",fitAll)});
})();`;

export const RUNTIME_SHA256 = createHash('sha256').update(RUNTIME_JS).digest('base64');

/** The bundle's Content-Security-Policy: nothing from the network, only the runtime runs. */
export const BUNDLE_CSP = `default-src 'none'; img-src data: blob:; media-src data: blob:; font-src data:; style-src 'unsafe-inline'; script-src 'sha256-${RUNTIME_SHA256}'; base-uri 'none'; form-action 'none'`;
